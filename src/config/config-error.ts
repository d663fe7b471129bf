// The error of a config that cannot be used, listing every problem with where it is.

/** One problem, with where it is. */
export interface ConfigIssue {
  /** Field path as written in messages, e.g. `environments[0].syncPolicy.retry.limit`; "" for the whole file. */
  path: string;
  /** 1-based line in the file, when known. */
  line?: number;
  message: string;
}

/** A config that cannot be used. `message` lists every problem, one per line. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** One line per problem, each `<file>: <path>: <problem>` or `<file>:<line>: <problem>`. */
  readonly problems: string[];
  readonly file: string;
  readonly issues: ConfigIssue[];

  constructor(file: string, issues: ConfigIssue[]) {
    const problems = issues.map((issue) => formatIssue(file, issue));
    super(problems.join("\n"));
    this.file = file;
    this.issues = issues;
    this.problems = problems;
  }
}

function formatIssue(file: string, issue: ConfigIssue): string {
  if (issue.path === "")
    return issue.line === undefined ? `${file}: ${issue.message}` : `${file}:${issue.line}: ${issue.message}`;
  return `${file}: ${issue.path}: ${issue.message}`;
}

/** `environments[1].syncPolicy.retry`; keys that are not identifiers are quoted: `a["b c"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$-]*$/.test(segment))
      out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}
