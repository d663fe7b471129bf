// The jq program syncward runs for one jqPathExpressions entry, and how its output reads. Pure.
//
// Argo CD runs `del(<expr>)`, which is `delpaths([path(<expr>)])`: the program prints, for each
// input, the paths the expression selects, or the error that stopped it. Expressions come from a
// repository, so the program first shadows every builtin that reads the environment or input
// ($ENV, env, input, inputs, input_filename, ...) or stops jq (halt, halt_error): they raise an
// error syncward reports instead. $__loc__ is harmless and stays.

/** More locations than this from one expression on one object is a mistake, not a rule. */
export const MAX_PATHS = 10_000;

const FORBIDDEN: Array<[name: string, what: string]> = [
  ["env", "reads the environment"],
  ["input", "reads input"],
  ["inputs", "reads input"],
  ["input_filename", "reads input"],
  ["input_line_number", "reads input"],
  ["modulemeta", "reads modules"],
  ["get_search_list", "reads modules"],
  ["get_prog_origin", "reads modules"],
  ["get_jq_origin", "reads modules"],
  ["halt", "stops jq"],
  ["halt_error", "stops jq"],
  ["halt_error(message)", "stops jq"],
];

function deny(name: string, what: string): string {
  const bare = name.replace(/\(.*/, "");
  return `def ${name}: error({syncward_forbidden: ${JSON.stringify(`${bare} (${what})`)}});`;
}

const PRELUDE = `${FORBIDDEN.map(([name, what]) => deny(name, what)).join("\n")}
{syncward_forbidden: "$ENV (reads the environment)"} as $ENV |
`;

/** The program for one expression. New lines around it keep a trailing `#` comment inside. */
export function pathProgram(expression: string): string {
  return `${PRELUDE}try {paths: [limit(${MAX_PATHS + 1}; path(
${expression}
))]} catch {error: .}
`;
}

/** A program that only compiles the expression (`empty |` runs nothing), for config validation. */
export function compileOnlyProgram(expression: string): string {
  return `empty | ${pathProgram(expression)}`;
}

export type PathToken = string | number | { start: number | null; end: number | null };

export type InputResult =
  | { kind: "paths"; paths: PathToken[][] }
  /** A jq runtime error (iterating null without `[]?`, for example): Argo CD skips the rule. */
  | { kind: "runtime-error"; message: string }
  /** Not an ignore rule syncward can evaluate: the caller reports it. */
  | { kind: "broken"; reason: string };

function isToken(t: unknown): t is PathToken {
  if (typeof t === "string" || typeof t === "number") return true;
  if (typeof t !== "object" || t === null) return false;
  const { start, end } = t as Record<string, unknown>;
  return (start === null || typeof start === "number") && (end === null || typeof end === "number");
}

/** Reads one output line of pathProgram. */
export function readResult(line: string): InputResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: "broken", reason: "jq printed something that is not JSON" };
  }
  const record = (value ?? {}) as { paths?: unknown; error?: unknown };
  if ("error" in record) {
    const error = record.error as { syncward_forbidden?: unknown } | string | null;
    if (error && typeof error === "object" && typeof error.syncward_forbidden === "string") {
      return { kind: "broken", reason: `uses ${error.syncward_forbidden}, which an ignore rule may not` };
    }
    const message = typeof error === "string" ? error : JSON.stringify(error);
    if (message.startsWith("Invalid path expression")) {
      return {
        kind: "broken",
        reason: `is not a path expression (${message}); write a path such as .spec.replicas or .spec.template.spec.containers[] | select(.name == "istio-proxy")`,
      };
    }
    return { kind: "runtime-error", message };
  }
  const paths = record.paths;
  if (!Array.isArray(paths) || !paths.every((p) => Array.isArray(p) && p.every(isToken))) {
    return { kind: "broken", reason: "jq printed something that is not a list of paths" };
  }
  if (paths.length > MAX_PATHS) {
    return { kind: "broken", reason: `selects more than ${MAX_PATHS} locations in one object` };
  }
  return { kind: "paths", paths: paths as PathToken[][] };
}

/** jq's own words for a compile error, without its banner lines. */
export function compileError(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.replace(/^jq: error: /, "").trim())
    .filter((l) => l !== "" && !/^jq: \d+ compile errors?$/.test(l));
  return lines.join(" ").replace(/ \(Unix shell quoting issues\?\)/, "");
}
