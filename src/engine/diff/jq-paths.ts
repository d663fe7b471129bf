// jqPathExpressions with Argo CD's meaning: the expression selects the paths to delete (Argo CD runs
// `del(<expr>)` with gojq). Evaluated by jq itself (jq-engine.ts), bounded in time and memory.
import { createHash } from "node:crypto";
import { BoundedMap } from "../../util/bounded-map.ts";
import { IgnoreRuleError } from "./ignore-rule-error.ts";
import { JQ_DEADLINE_MS, type JqOutcome, runJq } from "./jq-engine.ts";
import {
  compileError,
  compileOnlyProgram,
  type InputResult,
  type PathToken,
  pathProgram,
  readResult,
} from "./jq-program.ts";
import { getAt, resolveTokens } from "./json-pointer.ts";
import type { Path } from "./types.ts";

/** Expressions known to compile, and the reason those that cannot run fail (newest 500 of each). */
const compiled = new BoundedMap<string, true>(500);
const failed = new BoundedMap<string, string>(500);
/** Results by expression and object content: a resync of unchanged objects runs no jq. */
const results = new BoundedMap<string, InputResult>(20_000);

function broken(expression: string, reason: string): IgnoreRuleError {
  return new IgnoreRuleError(`jqPathExpressions "${expression}" ${reason}`);
}

/** Why a run that did not end normally failed, or undefined when it did. */
function failure(outcome: JqOutcome): string | undefined {
  if (outcome.kind === "timeout") return `did not finish within ${JQ_DEADLINE_MS} ms`;
  if (outcome.kind === "crashed") {
    return /Aborted|memory/i.test(outcome.message)
      ? "ran out of memory"
      : /call stack/i.test(outcome.message)
        ? "recursed too deep"
        : `could not be evaluated (${outcome.message})`;
  }
  if (outcome.overflow) return "printed too much";
  return undefined;
}

/** Checks that an expression compiles; throws IgnoreRuleError with jq's reason when it does not. */
export function compileJqPath(expression: string): void {
  if (compiled.has(expression)) return;
  if (expression.trim() === "") throw new IgnoreRuleError("jqPathExpressions: an expression is empty");
  if (/\$ENV\b/.test(expression))
    throw broken(expression, "uses $ENV (reads the environment), which an ignore rule may not");
  const earlier = failed.get(expression);
  if (earlier) throw broken(expression, earlier);
  const outcome = runJq(compileOnlyProgram(expression), "null");
  const why = failure(outcome);
  if (why) {
    failed.set(expression, why);
    throw broken(expression, why);
  }
  if (outcome.kind === "done" && outcome.status !== 0) {
    throw broken(expression, `does not parse: ${compileError(outcome.stderr)}`);
  }
  compiled.set(expression, true);
}

function key(expression: string, json: string): string {
  return `${createHash("sha256").update(json).digest("base64")} ${expression}`;
}

/** Evaluates the expression on each input (JSON texts) in one run of jq. */
function evaluate(expression: string, inputs: string[]): InputResult[] {
  const outcome = runJq(pathProgram(expression), inputs.join("\n"));
  const why = failure(outcome);
  if (why) {
    failed.set(expression, why);
    throw broken(expression, why);
  }
  const lines = outcome.kind === "done" ? outcome.stdout.split("\n").filter((l) => l !== "") : [];
  if (lines.length !== inputs.length) {
    throw broken(
      expression,
      `could not be evaluated (jq printed ${lines.length} results for ${inputs.length} objects)`,
    );
  }
  return lines.map(readResult);
}

type Slice = { start: number | null; end: number | null };

/**
 * A jq path resolved against `input`. A slice is a list of its own in jq: an index after it counts
 * from the slice's start; a slice at the end stands for every position it covers.
 */
function concrete(input: unknown, tokens: readonly PathToken[]): Path[] {
  const at = tokens.findIndex((t) => typeof t === "object");
  if (at < 0) {
    const path = resolveTokens(input, tokens as Array<string | number>);
    return path ? [path] : [];
  }
  const head = tokens.slice(0, at) as Array<string | number>;
  const list = getAt(input, resolveTokens(input, head) ?? []);
  if (!resolveTokens(input, head) || !Array.isArray(list)) return [];
  const slice = tokens[at] as Slice;
  const clamp = (n: number) => Math.max(0, Math.min(list.length, n < 0 ? list.length + n : n));
  const start = clamp(slice.start ?? 0);
  const end = Math.max(start, clamp(slice.end ?? list.length));
  const next = tokens[at + 1];
  if (next === undefined) {
    const out: Path[] = [];
    for (let i = start; i < end; i++) out.push(...concrete(input, [...head, i]));
    return out;
  }
  if (typeof next !== "number") return [];
  const index = next < 0 ? end + next : start + next;
  if (index < start || index >= end) return [];
  return concrete(input, [...head, index, ...tokens.slice(at + 2)]);
}

/**
 * The existing locations the expression selects in each of `inputs`. A jq runtime error (iterating
 * a missing list without `[]?`, for example) selects nothing in that object, as in Argo CD, which
 * skips a failing patch; anything syncward cannot evaluate throws IgnoreRuleError.
 */
export function jqPathsOf(expression: string, inputs: readonly unknown[]): Path[][] {
  compileJqPath(expression);
  const texts = inputs.map((input) => JSON.stringify(input ?? null));
  const keys = texts.map((text) => key(expression, text));
  const missing = new Map<string, string>();
  keys.forEach((k, i) => {
    if (!results.has(k)) missing.set(k, texts[i] as string);
  });
  if (missing.size > 0) {
    const fresh = evaluate(expression, [...missing.values()]);
    let n = 0;
    for (const k of missing.keys()) results.set(k, fresh[n++] as InputResult);
  }
  return inputs.map((input, i) => {
    const result = results.get(keys[i] as string) as InputResult;
    if (result.kind === "broken") throw broken(expression, result.reason);
    if (result.kind === "runtime-error") return [];
    return result.paths.flatMap((tokens) => concrete(input, tokens));
  });
}

/** The existing locations the expression selects in `input`. */
export function jqPaths(expression: string, input: unknown): Path[] {
  return jqPathsOf(expression, [input])[0] as Path[];
}
