// Who owns a field of a live object: names the other side of a drift fight (an HPA, kubectl edit,
// a mutating webhook) instead of just reporting that a field keeps changing back.
import type { KubeObject, ManagedFieldsEntry } from "../../kube/object.ts";
import { fieldsV1Paths, managedEntries } from "./fields-v1.ts";
import { parsePointer, resolveTokens } from "./json-pointer.ts";
import type { Path } from "./types.ts";

/**
 * The managedFields entries (in that order) owning the field at `pointer`, a field inside it, or an
 * atomic value that contains it.
 */
export function fieldOwnersOf(live: KubeObject, pointer: string): ManagedFieldsEntry[] {
  const tokens = parsePointer(pointer);
  const target: Path =
    resolveTokens(live, tokens) ??
    tokens.map((token) => (/^(0|[1-9]\d*)$/.test(token) ? Number(token) : token));
  return managedEntries(live.metadata?.managedFields).filter((entry) =>
    fieldsV1Paths(entry.fieldsV1, live).some(
      (field) => startsWith(field.path, target) || (field.leaf && startsWith(target, field.path)),
    ),
  );
}

/** The managers (without repeats) owning the field at `pointer`; see fieldOwnersOf. */
export function fieldManagersOf(live: KubeObject, pointer: string): string[] {
  return [...new Set(fieldOwnersOf(live, pointer).map((entry) => entry.manager ?? ""))];
}

export function startsWith(path: Path, prefix: Path): boolean {
  if (prefix.length > path.length) return false;
  for (let i = 0; i < prefix.length; i++) if (path[i] !== prefix[i]) return false;
  return true;
}
