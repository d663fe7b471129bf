// Reading `.github/syncward.yml`: safe YAML, schema validation, and errors that list every problem
// as `<file>: <path>: <problem>` (or `<file>:<line>: <problem>` for YAML syntax errors).
import { readFile } from "node:fs/promises";
import { ConfigError, type ConfigIssue, formatPath } from "./config-error.ts";
import { didYouMean } from "./did-you-mean.ts";
import { parseYamlSafely } from "./safe-yaml.ts";
import { type SchemaIssue, safeParseConfig } from "./schema.ts";
import type { EnvironmentConfig, SyncwardConfig } from "./types.ts";

export { ConfigError, type ConfigIssue, formatPath } from "./config-error.ts";

export const DEFAULT_CONFIG_FILE = ".github/syncward.yml";

/** Thrown by findEnvironment() for a name the config does not define. */
export class UnknownEnvironmentError extends Error {
  override readonly name = "UnknownEnvironmentError";
  readonly environment: string;
  readonly known: string[];
  readonly suggestion: string | undefined;

  constructor(environment: string, known: string[]) {
    const suggestion = didYouMean(environment, known);
    const hint = suggestion === undefined ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`;
    super(
      known.length === 0
        ? `unknown environment ${JSON.stringify(environment)}: the config defines no environments`
        : `unknown environment ${JSON.stringify(environment)}${hint}; environments: ${known.join(", ")}`,
    );
    this.environment = environment;
    this.known = known;
    this.suggestion = suggestion;
  }
}

/**
 * Parses and validates the text of `.github/syncward.yml`, filling every default. The YAML is read
 * safely (see safe-yaml.ts: core schema only, no custom tags, bounded aliases).
 * @throws ConfigError listing every problem found.
 */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): SyncwardConfig {
  const { data, lineAt } = parseYamlSafely(text, file);
  if (data === null || data === undefined) {
    throw new ConfigError(file, [{ path: "", message: "is empty: it must define `environments`" }]);
  }
  return validate(data, file, lineAt);
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
  return parseConfig(await readConfigFileText(path), path);
}

/** A config file's text. @throws ConfigError naming the file when it is missing or unreadable. */
export async function readConfigFileText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = code === "ENOENT" ? "file not found" : `cannot be read: ${(err as Error).message}`;
    throw new ConfigError(path, [{ path: "", message }]);
  }
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
  lineAt: (path: readonly PropertyKey[]) => number | undefined,
): SyncwardConfig {
  const result = safeParseConfig(data);
  if (result.success) return result.data;
  // In the order of the file where lines are known (the schema's order otherwise; sort is stable).
  const issues = result.issues.flatMap((issue) => toConfigIssues(issue, lineAt));
  throw new ConfigError(file, sortByLine(issues));
}

export function toConfigIssues(
  issue: SchemaIssue,
  lineAt: (path: readonly PropertyKey[]) => number | undefined,
): ConfigIssue[] {
  if (issue.keys) {
    // One issue per unknown key; the message has one line per key (see strictObject in schema.ts).
    const lines = issue.message.split("\n");
    return issue.keys.map((key, i) => {
      const path = [...issue.path, key];
      return { path: formatPath(path), line: lineAt(path), message: lines[i] ?? "unknown field" };
    });
  }
  // A problem of the whole file is written `<file>: <problem>`, without a line.
  const line = issue.path.length === 0 ? undefined : lineAt(issue.path);
  return [{ path: formatPath(issue.path), line, message: issue.message }];
}

export function sortByLine(issues: ConfigIssue[]): ConfigIssue[] {
  if (issues.some((issue) => issue.line === undefined)) return issues;
  return [...issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}
