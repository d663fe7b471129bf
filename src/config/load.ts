// Reading `.github/syncward.yml`: safe YAML, schema validation, and errors that list every problem
// as `<file>: <path>: <problem>` (or `<file>:<line>: <problem>` for YAML syntax errors).
import { readFile } from "node:fs/promises";
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
} from "yaml";
import { didYouMeanHint } from "./did-you-mean.ts";
import { type SchemaIssue, safeParseConfig } from "./schema.ts";
import type { EnvironmentConfig, SyncwardConfig } from "./types.ts";

export const DEFAULT_CONFIG_FILE = ".github/syncward.yml";

/** Larger files are refused before parsing: a real config is a few KiB. */
const MAX_CONFIG_BYTES = 512 * 1024;
/** Aliases (`*name`) allowed in one file; more indicates a "billion laughs" expansion attack. */
const MAX_ALIAS_COUNT = 100;

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

/** Thrown by findEnvironment() for a name the config does not define. */
export class UnknownEnvironmentError extends Error {
  override readonly name = "UnknownEnvironmentError";
  readonly environment: string;
  readonly known: string[];
  readonly suggestion: string | undefined;

  constructor(environment: string, known: string[]) {
    const hint = didYouMeanHint(environment, known);
    super(
      known.length === 0
        ? `unknown environment ${JSON.stringify(environment)}: the config defines no environments`
        : `unknown environment ${JSON.stringify(environment)}${hint}; environments: ${known.join(", ")}`,
    );
    this.environment = environment;
    this.known = known;
    this.suggestion = hint === "" ? undefined : hint.slice(' (did you mean "'.length, -'"?)'.length);
  }
}

/**
 * Parses and validates the text of `.github/syncward.yml`, filling every default.
 * YAML is read safely: YAML 1.2 core schema only (no custom or language tags), unique keys, one
 * document, a bounded number of aliases. Merge keys (`<<: *defaults`) are allowed.
 * @throws ConfigError listing every problem found.
 */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): SyncwardConfig {
  if (Buffer.byteLength(text, "utf8") > MAX_CONFIG_BYTES) {
    throw new ConfigError(file, [
      { path: "", message: `file is larger than ${MAX_CONFIG_BYTES / 1024} KiB` },
    ]);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    schema: "core",
    version: "1.2",
    merge: true,
    uniqueKeys: true,
    customTags: [],
    resolveKnownTags: false,
  });
  const lineOf = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset).line;

  // Syntax errors and, as errors too, unknown tags (`!!js/function`, `!custom`): yaml only warns
  // about those and would read them as plain strings.
  const syntax: ConfigIssue[] = [...doc.errors, ...doc.warnings].map((e) => ({
    path: "",
    line: lineOf(e.pos[0]),
    message:
      e.code === "TAG_RESOLVE_FAILED"
        ? `${e.message.replace("tag:yaml.org,2002:", "!!")} (custom YAML tags are not allowed)`
        : e.message,
  }));
  if (syntax.length > 0) throw new ConfigError(file, sortByLine(syntax));

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ConfigError(file, [
      {
        path: "",
        message: `cannot be loaded: ${(err as Error).message} (at most ${MAX_ALIAS_COUNT} aliases are allowed)`,
      },
    ]);
  }
  if (data === null || data === undefined) {
    throw new ConfigError(file, [{ path: "", message: "is empty: it must define `environments`" }]);
  }
  return validate(data, file, (path) => lineOf(locate(doc, path)));
}

/**
 * Validates data that is already loaded (for example Probot's `context.config("syncward.yml")`,
 * which has resolved `_extends`), filling every default.
 * @throws ConfigError listing every problem found.
 */
export function validateConfig(data: unknown, file = DEFAULT_CONFIG_FILE): SyncwardConfig {
  if (data === null || data === undefined) {
    throw new ConfigError(file, [{ path: "", message: "is empty: it must define `environments`" }]);
  }
  return validate(data, file, () => undefined);
}

/** Reads, parses and validates a config file. @throws ConfigError (also when it cannot be read). */
export async function loadConfigFile(path: string): Promise<SyncwardConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = code === "ENOENT" ? "file not found" : `cannot be read: ${(err as Error).message}`;
    throw new ConfigError(path, [{ path: "", message }]);
  }
  return parseConfig(text, path);
}

/** The environment called `name`. @throws UnknownEnvironmentError with a "did you mean" hint. */
export function findEnvironment(config: SyncwardConfig, name: string): EnvironmentConfig {
  const found = config.environments.find((env) => env.name === name);
  if (found) return found;
  throw new UnknownEnvironmentError(
    name,
    config.environments.map((env) => env.name),
  );
}

function validate(
  data: unknown,
  file: string,
  lineAt: (path: PropertyKey[]) => number | undefined,
): SyncwardConfig {
  const result = safeParseConfig(data);
  if (result.success) return result.data;
  // In the order of the file where lines are known (the schema's order otherwise; sort is stable).
  const issues = result.issues.flatMap((issue) => toConfigIssues(issue, lineAt));
  throw new ConfigError(file, sortByLine(issues));
}

function toConfigIssues(
  issue: SchemaIssue,
  lineAt: (path: PropertyKey[]) => number | undefined,
): ConfigIssue[] {
  if (issue.keys) {
    // One issue per unknown key; the message has one line per key (see strictObject in schema.ts).
    const lines = issue.message.split("\n");
    return issue.keys.map((key, i) => {
      const path = [...issue.path, key];
      return { path: formatPath(path), line: lineAt(path), message: lines[i] ?? "unknown field" };
    });
  }
  return [{ path: formatPath(issue.path), line: lineAt(issue.path), message: issue.message }];
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

/** Source offset of the key (or list item) at `path`, or of the deepest ancestor found. */
function locate(doc: Document, path: PropertyKey[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = (doc.contents as Node | null)?.range?.[0];
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
      );
      if (!pair) return offset;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      node = node.items[segment];
      offset = (node as Node | undefined)?.range?.[0] ?? offset;
    } else {
      return offset;
    }
  }
  return offset;
}

function sortByLine(issues: ConfigIssue[]): ConfigIssue[] {
  if (issues.some((issue) => issue.line === undefined)) return issues;
  return [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}
