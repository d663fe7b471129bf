// jqPathExpressions with Argo CD's meaning: the expression selects the paths to delete (Argo CD runs
// `del(<expr>)`). Evaluated with jqjs, a synchronous pure-JavaScript jq, as `path(<expr>)`.
import jq from "@michaelhomer/jqjs";
import { BoundedMap } from "../../util/bounded-map.ts";
import { IgnoreRuleError } from "./ignore-rule-error.ts";
import { resolveTokens } from "./json-pointer.ts";
import type { Path } from "./types.ts";

type Filter = (input: unknown) => Iterable<unknown>;
/** Expressions come from every repository's config over the process's life: the newest 500 stay compiled. */
const compiled = new BoundedMap<string, Filter>(500);

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Compiles an expression once; throws IgnoreRuleError with the parser's reason when it does not parse. */
export function compileJqPath(expression: string): Filter {
  let filter = compiled.get(expression);
  if (filter) return filter;
  if (expression.trim() === "") throw new IgnoreRuleError("jqPathExpressions: an expression is empty");
  try {
    filter = jq.compile(`path(${expression})`);
  } catch (err) {
    throw new IgnoreRuleError(`jqPathExpressions "${expression}" does not parse: ${message(err)}`);
  }
  compiled.set(expression, filter);
  return filter;
}

/**
 * The existing locations the expression selects in `input`. A jq runtime error (iterating a
 * missing list without `[]?`, for example) selects nothing, as in Argo CD, which skips a failing
 * patch; an expression that is not a path (`.a | tostring`) throws IgnoreRuleError.
 */
export function jqPaths(expression: string, input: unknown): Path[] {
  const filter = compileJqPath(expression);
  const raw: unknown[] = [];
  try {
    for (const p of filter(input)) raw.push(p);
  } catch (err) {
    const text = message(err);
    if (typeof err === "string" && text.startsWith("no paths for")) {
      throw new IgnoreRuleError(
        `jqPathExpressions "${expression}" is not a path expression (${text}); write a path such as .spec.replicas or .spec.template.spec.containers[] | select(.name == "istio-proxy")`,
      );
    }
    return [];
  }
  const out: Path[] = [];
  for (const p of raw) {
    if (!Array.isArray(p)) continue;
    if (p.some((token) => typeof token !== "string" && typeof token !== "number")) {
      // jqjs gets open-ended slices wrong ([1:] drops the last item), so refuse rather than guess.
      throw new IgnoreRuleError(
        `jqPathExpressions "${expression}" uses an array slice, which syncward does not support; select items with .[] | select(...) or an index .[n]`,
      );
    }
    const path = resolveTokens(input, p as Array<string | number>);
    if (path) out.push(path);
  }
  return out;
}
