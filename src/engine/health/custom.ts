// Argo CD's `resource.customizations` health checks: which script, if any, judges an object.
// Keys are `group/Kind` (plain `Kind` for the core group, as Argo CD writes them); `*` matches
// any run of characters and `?` one, in group and kind alike. An exact key wins over wildcards;
// among wildcards the first in the config wins (Argo CD picks an arbitrary one).

import type { ResourceCustomizations } from "../../config/types.ts";
import { groupOf, type KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { DEFAULT_BUDGET, HealthScript, type ScriptBudget } from "./lua-script.ts";

export interface HealthChecks {
  /** The custom script's verdict on `obj`, or undefined when no script covers its kind. */
  assess(obj: KubeObject): Health | undefined;
  /** How many scripts were compiled. */
  readonly size: number;
}

/** Argo CD's key of an object's kind: `group/Kind`, or `Kind` for the core group. */
export function customizationKey(apiVersion: string, kind: string): string {
  const group = groupOf(apiVersion);
  return group === "" ? kind : `${group}/${kind}`;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

const NO_CHECKS: HealthChecks = { assess: () => undefined, size: 0 };
const compiled = new WeakMap<ResourceCustomizations, HealthChecks>();

/**
 * Compiles every `health.lua` of the customizations once (cached per customizations object, so
 * all environments of one config share the scripts). A script that does not compile throws
 * LuaCompileError; config loading reports those first (see luaSyntaxProblem).
 */
export function compileHealthChecks(
  customizations: ResourceCustomizations | undefined,
  budget: ScriptBudget = DEFAULT_BUDGET,
): HealthChecks {
  if (!customizations) return NO_CHECKS;
  const cached = budget === DEFAULT_BUDGET ? compiled.get(customizations) : undefined;
  if (cached) return cached;

  const exact = new Map<string, HealthScript>();
  const wildcards: Array<{ pattern: RegExp; script: HealthScript }> = [];
  for (const [key, c] of Object.entries(customizations)) {
    const source = c["health.lua"];
    if (!source) continue;
    const script = new HealthScript(key, source, budget);
    if (/[*?]/.test(key)) wildcards.push({ pattern: globToRegExp(key), script });
    else exact.set(key, script);
  }
  // The script for each kind is looked up once, not per object.
  const byKind = new Map<string, HealthScript | undefined>();
  const scriptFor = (key: string): HealthScript | undefined => {
    if (byKind.has(key)) return byKind.get(key);
    const script = exact.get(key) ?? wildcards.find((w) => w.pattern.test(key))?.script;
    byKind.set(key, script);
    return script;
  };
  const checks: HealthChecks = {
    size: exact.size + wildcards.length,
    assess: (obj) => scriptFor(customizationKey(obj.apiVersion, obj.kind))?.run(obj),
  };
  if (budget === DEFAULT_BUDGET) compiled.set(customizations, checks);
  return checks;
}
