// RespectIgnoreDifferences: what to apply to an object that already exists so that a sync does not
// reset fields the environment chose to ignore (an HPA-owned /spec/replicas, an injected sidecar).
import type { IgnoreDifference } from "../../config/types.ts";
import type { KubeObject } from "../../kube/object.ts";
import { cloneJson } from "./deep-equal.ts";
import { ignoredLocations, removePaths, rulesFor } from "./ignore-rules.ts";
import { getAt, isPlainObject } from "./json-pointer.ts";
import { counterpartPath } from "./list-match.ts";
import { normalizeObject } from "./normalize.ts";
import type { Path } from "./types.ts";

/**
 * A copy of desired in which every location the matching rules ignore holds live's value: replaced
 * where desired has it, added where only live has it (map keys, and list items appended), and
 * removed where live lacks it. Live is read normalized, so status and server metadata are never
 * copied. Items a managedFieldsManagers manager owns count only where desired lacks them.
 */
export function ignoredValuesFromLive(
  desired: KubeObject,
  live: KubeObject,
  rules: readonly IgnoreDifference[],
): KubeObject {
  const out = cloneJson(desired);
  const matching = rulesFor(rules, desired, live);
  if (matching.length === 0) return out;
  const l = normalizeObject(live);
  const sets: Array<{ path: Path; value: unknown }> = [];
  const adds: Array<{ at: Path; rest: Path; value: unknown }> = [];
  const removes: Path[] = [];
  for (const loc of ignoredLocations(matching, out, l, live.metadata?.managedFields)) {
    if (loc.side === "desired") {
      const cp = counterpartPath(loc.path, out, l);
      if (cp.matched === loc.path.length) sets.push({ path: loc.path, value: getAt(l, cp.path) });
      else removes.push(loc.path);
      continue;
    }
    const cp = counterpartPath(loc.path, l, out);
    const value = getAt(l, loc.path);
    if (value === undefined) continue;
    if (cp.matched === loc.path.length) {
      if (!loc.itemOnly) sets.push({ path: cp.path, value });
    } else {
      adds.push({ at: cp.path, rest: loc.path.slice(cp.matched), value });
    }
  }
  for (const { path, value } of sets) setAt(out, path, cloneJson(value));
  for (const { at, rest, value } of adds) addAt(out, at, rest, cloneJson(value));
  removePaths(out, removes);
  return out;
}

function setAt(root: unknown, path: Path, value: unknown): void {
  if (path.length === 0) return;
  const parent = getAt(root, path.slice(0, -1));
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(parent) && typeof last === "number") parent[last] = value;
  else if (isPlainObject(parent) && typeof last === "string") parent[last] = value;
}

/**
 * Adds a value desired lacks under the deepest location both have: missing maps on the way are
 * created; a list item is appended, and only as the last step (a field of an item desired does not
 * declare is not invented).
 */
export function addAt(root: unknown, at: Path, rest: Path, value: unknown): void {
  let node = getAt(root, at);
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] as string | number;
    const last = i === rest.length - 1;
    if (typeof token === "number") {
      if (!last || !Array.isArray(node)) return;
      node.push(value);
      return;
    }
    if (!isPlainObject(node)) return;
    if (last) {
      node[token] = value;
      return;
    }
    if (!isPlainObject(node[token])) {
      // Create only maps: a list desired does not have would need an item it does not declare.
      if ((Object.hasOwn(node, token) && node[token] !== null) || typeof rest[i + 1] === "number") return;
      node[token] = {};
    }
    node = node[token];
  }
}
