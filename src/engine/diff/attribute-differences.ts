// The comparison's differences with who made them, plus what untrusted managers added where Git
// declares nothing. Only for live objects that carry managedFields (a file given to `syncward
// diff` may not): without them nobody can be named, and the plain subset comparison stands.
import type { KubeObject } from "../../kube/object.ts";
import { fieldOwnersOf, startsWith } from "./field-managers-of.ts";
import { foreignAdditions, ownerOf, pointerOf } from "./foreign-fields.ts";
import { globMatch } from "./glob.ts";
import { ignoredLocations, rulesFor } from "./ignore-rules.ts";
import { getAt } from "./json-pointer.ts";
import { isSecret, normalizeObject, SERVER_ANNOTATIONS } from "./normalize.ts";
import { isTrustedManager, OWN_MANAGER } from "./trusted-managers.ts";
import type { CompareOptions, Difference, Path } from "./types.ts";

const MASK = "********";

/** Managers trusted for this object: the environment's list and its managedFieldsManagers rules. */
export function trustedFor(desired: KubeObject, live: KubeObject, options: CompareOptions): string[] {
  const rules = rulesFor(options.ignoreDifferences ?? [], desired, live);
  return [...(options.trustedManagers ?? []), ...rules.flatMap((r) => r.managedFieldsManagers ?? [])];
}

export function attributeDifferences(
  differences: Difference[],
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions,
): Difference[] {
  if (!Array.isArray(live.metadata?.managedFields) || live.metadata.managedFields.length === 0)
    return differences;
  const trusted = trustedFor(desired, live, options);
  // The common case, an object only syncward and Kubernetes' controllers wrote: nothing to add.
  const untrusted = live.metadata.managedFields.some(
    (e) => e.subresource !== "status" && !isTrustedManager(e.manager ?? "", trusted),
  );
  if (!untrusted && differences.every((d) => d.kind === "missing")) return differences;
  const out: Difference[] = [];
  for (const d of differences) {
    if (d.kind === "missing") {
      out.push(d);
      continue;
    }
    const owners = fieldOwnersOf(live, d.path)
      .filter((e) => e.manager !== OWN_MANAGER)
      .map(ownerOf);
    // A list item only trusted managers (or nobody: a server default) put there is theirs, not drift.
    if (d.kind === "extra" && owners.every((o) => isTrustedManager(o.manager, trusted))) continue;
    out.push(owners.length > 0 ? { ...d, owners } : d);
  }
  if (!untrusted) return out;
  const keys = options.ignoreMetadataKeys ?? [];
  const d = normalizeObject(desired, keys);
  const rules = rulesFor(options.ignoreDifferences ?? [], desired, live);
  const ignored =
    rules.length > 0
      ? ignoredLocations(rules, d, normalizeObject(live, keys), live.metadata.managedFields)
          .filter((loc) => loc.side === "live")
          .map((loc) => loc.path)
      : [];
  const skip = (path: Path) => ignored.some((p) => startsWith(path, p)) || isIgnoredMetadata(path, keys);
  const secret = isSecret(live);
  for (const addition of foreignAdditions(d, live, trusted, skip)) {
    const existing = out.findIndex((x) => x.path === addition.pointer);
    if (existing >= 0) {
      const x = out[existing] as Difference;
      out[existing] = { ...x, owners: x.owners ?? [addition.owner] };
      continue;
    }
    const value = getAt(live, addition.path);
    out.push({
      path: pointerOf(addition.path),
      kind: "added",
      live:
        secret && (addition.path[0] === "data" || addition.path[0] === "stringData") ? mask(value) : value,
      owners: [addition.owner],
    });
  }
  return out;
}

function mask(value: unknown): unknown {
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.keys(value).map((k) => [k, MASK]));
  return MASK;
}

function isIgnoredMetadata(path: Path, keys: readonly string[]): boolean {
  if (path[0] !== "metadata" || (path[1] !== "annotations" && path[1] !== "labels")) return false;
  const key = path[2];
  if (typeof key !== "string") return false;
  if (path[1] === "annotations" && SERVER_ANNOTATIONS.includes(key)) return true;
  return keys.some((pattern) => globMatch(pattern, key));
}
