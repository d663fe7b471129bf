// ignoreDifferences: which rules apply to an object, and which locations of desired and live they
// take out of the comparison.
import type { IgnoreDifference } from "../../config/types.ts";
import type { KubeObject } from "../../kube/object.ts";
import { groupOf } from "../../kube/object.ts";
import { fieldsV1Paths, managedEntries } from "./fields-v1.ts";
import { globMatch } from "./glob.ts";
import { IgnoreRuleError } from "./ignore-rule-error.ts";
import { jqPathsOf } from "./jq-paths.ts";
import { getAt, isPlainObject, type JsonPointerError, parsePointer, resolveTokens } from "./json-pointer.ts";
import { counterpartPath } from "./list-match.ts";
import { isSecurityField } from "./security-fields.ts";
import type { Path } from "./types.ts";

/**
 * Rules that apply to the object: group and kind are globs (`*`, `apps`, `*.cert-manager.io`),
 * name and namespace match exactly when given (as in Argo CD).
 */
/** Each rule's position in the list it came from, so an error can name the entry. */
const positions = new WeakMap<IgnoreDifference, number>();

/** How an error names a rule: its entry in ignoreDifferences and what it matches. */
export function describeRule(rule: IgnoreDifference): string {
  const at = positions.get(rule);
  const what = [`group ${rule.group || '""'}`, `kind ${rule.kind || '""'}`];
  if (rule.name) what.push(`name ${rule.name}`);
  if (rule.namespace) what.push(`namespace ${rule.namespace}`);
  return `ignoreDifferences${at === undefined ? "" : `[${at}]`} (${what.join(", ")})`;
}

export function rulesFor(
  rules: readonly IgnoreDifference[],
  desired: KubeObject,
  live?: KubeObject,
): IgnoreDifference[] {
  if (rules.length === 0) return [];
  for (const [i, rule] of rules.entries()) positions.set(rule, i);
  const group = groupOf(desired.apiVersion ?? "");
  const name = desired.metadata?.name ?? live?.metadata?.name ?? "";
  const namespace = desired.metadata?.namespace ?? live?.metadata?.namespace ?? "";
  return rules.filter(
    (rule) =>
      globMatch(rule.group ?? "", group) &&
      globMatch(rule.kind ?? "", desired.kind) &&
      (!rule.name || rule.name === name) &&
      (!rule.namespace || rule.namespace === namespace),
  );
}

export interface IgnoredLocation {
  side: "desired" | "live";
  path: Path;
  /** A list item a managedFieldsManagers manager owns as a whole: ignored only where the other side lacks it. */
  itemOnly: boolean;
}

/**
 * Every location the rules select, in both objects. JSON pointers and jq are evaluated on each side;
 * managedFieldsManagers reads `managedFields` (the live object's) and locates the fields in live.
 */
export function ignoredLocations(
  rules: readonly IgnoreDifference[],
  desired: unknown,
  live: unknown,
  managedFields: unknown,
): IgnoredLocation[] {
  const out: IgnoredLocation[] = [];
  const push = (side: "desired" | "live", path: Path | undefined, itemOnly = false) => {
    if (path && path.length > 0) out.push({ side, path, itemOnly });
  };
  for (const rule of rules) {
    try {
      locationsOf(rule, desired, live, managedFields, push);
    } catch (err) {
      if (err instanceof IgnoreRuleError) throw new IgnoreRuleError(`${describeRule(rule)}: ${err.message}`);
      throw err;
    }
  }
  return out;
}

function locationsOf(
  rule: IgnoreDifference,
  desired: unknown,
  live: unknown,
  managedFields: unknown,
  push: (side: "desired" | "live", path: Path | undefined, itemOnly?: boolean) => void,
): void {
  for (const pointer of rule.jsonPointers ?? []) {
    let tokens: string[];
    try {
      tokens = parsePointer(pointer);
    } catch (err) {
      throw new IgnoreRuleError(`jsonPointers: ${(err as JsonPointerError).message}`);
    }
    push("desired", resolveTokens(desired, tokens));
    push("live", resolveTokens(live, tokens));
  }
  for (const expression of rule.jqPathExpressions ?? []) {
    const [inDesired, inLive] = jqPathsOf(expression, [desired, live]) as [Path[], Path[]];
    for (const path of inDesired) push("desired", path);
    for (const path of inLive) push("live", path);
  }
  const managers = rule.managedFieldsManagers ?? [];
  const kind = isPlainObject(live) && typeof live.kind === "string" ? live.kind : "";
  if (managers.length > 0) {
    for (const entry of managedEntries(managedFields)) {
      if (!managers.some((m) => globMatch(m, entry.manager ?? ""))) continue;
      for (const field of fieldsV1Paths(entry.fieldsV1, live)) {
        // fieldsV1 also lists fields normalization took out (status, the revision annotation).
        if (getAt(live, field.path) === undefined) continue;
        // A manager's name proves nothing (anyone can write under it): security-relevant
        // fields are ignored only where a jsonPointer or jq expression names them.
        if (isSecurityField(field.path, kind)) continue;
        if (field.leaf) push("live", field.path);
        else if (field.item) push("live", field.path, true);
      }
    }
  }
}

/**
 * Takes the ignored locations out of both objects (mutates them), each with its counterpart on the
 * other side. Lists that lose items are recorded in `origins` (new index -> index before removal),
 * so differences can still point into the objects the caller holds.
 */
export function removeIgnored(
  locations: readonly IgnoredLocation[],
  desired: unknown,
  live: unknown,
  origins?: Origins,
): void {
  const fromDesired: Path[] = [];
  const fromLive: Path[] = [];
  for (const loc of locations) {
    const [own, other, ownPaths, otherPaths] =
      loc.side === "desired"
        ? [desired, live, fromDesired, fromLive]
        : [live, desired, fromLive, fromDesired];
    const counterpart = counterpartPath(loc.path, own, other);
    const both = counterpart.matched === loc.path.length;
    if (loc.itemOnly && both) continue;
    ownPaths.push(loc.path);
    if (both) otherPaths.push(counterpart.path);
  }
  removePaths(desired, fromDesired, origins);
  removePaths(live, fromLive, origins);
}

/** For lists that lost items: the original index of each remaining item. */
export type Origins = WeakMap<readonly unknown[], number[]>;

/**
 * Removes locations from a value (mutates it). All locations are resolved before any list shrinks,
 * so indices stay valid; a location inside one already removed is a no-op.
 */
export function removePaths(root: unknown, paths: readonly Path[], origins?: Origins): void {
  const lists = new Map<unknown[], Set<number>>();
  const keys: Array<[Record<string, unknown>, string]> = [];
  for (const path of paths) {
    if (path.length === 0) continue;
    const parent = getAt(root, path.slice(0, -1));
    const last = path[path.length - 1];
    if (Array.isArray(parent) && typeof last === "number" && last < parent.length) {
      const set = lists.get(parent) ?? new Set<number>();
      set.add(last);
      lists.set(parent, set);
    } else if (isPlainObject(parent) && typeof last === "string") {
      keys.push([parent, last]);
    }
  }
  for (const [parent, key] of keys) delete parent[key];
  for (const [list, indices] of lists) {
    const origin = origins ? (origins.get(list) ?? list.map((_, i) => i)) : undefined;
    for (const index of [...indices].sort((a, b) => b - a)) {
      list.splice(index, 1);
      origin?.splice(index, 1);
    }
    if (origins && origin) origins.set(list, origin);
  }
}
