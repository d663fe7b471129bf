// What field managers that are not trusted added to a live object beyond what Git declares: a
// sidecar, `privileged: true` on a declared container, a hostPath volume, a ServiceAccount, an
// annotation. Server-side apply keeps such fields when Git's manifest is applied again (they are
// another manager's), so a subset comparison alone never sees them. `metadata.managedFields` says
// who set what; fields nobody owns (server defaults), fields a trusted manager owns within its
// pairs, and what syncward owns (including what admission added to its own requests) are not
// drift, except security-relevant fields: whoever's name owns those, they must be the render's.
import type { KubeObject, ManagedFieldsEntry } from "../../kube/object.ts";
import { startsWith } from "./field-managers-of.ts";
import { fieldsV1Paths, managedEntries, type OwnedField } from "./fields-v1.ts";
import { escapeToken, getAt } from "./json-pointer.ts";
import { counterpartPath } from "./list-match.ts";
import { isSecurityField } from "./security-fields.ts";
import { isTrustedFor, isTrustedPath, type TrustedManager } from "./trusted-managers.ts";
import type { Path } from "./types.ts";

/** Who made a change, as `metadata.managedFields` records it. */
export interface ChangeOwner {
  manager: string;
  /** `Update` (kubectl patch/edit/scale/set) or `Apply` (server-side apply). */
  operation: string;
  /** When the manager last wrote the object (managedFields keep one time per manager). */
  time?: string;
  subresource?: string;
  /** Trusted for this field: within the manager's pairs, not security-relevant (set by attributeDifferences). */
  trusted?: boolean;
}

export interface ForeignAddition {
  /** The outermost added location, as a concrete path in live: remove it and the addition is gone. */
  path: Path;
  pointer: string;
  owner: ChangeOwner;
}

export function pointerOf(path: Path): string {
  return path.map((t) => `/${escapeToken(t)}`).join("");
}

export function ownerOf(entry: ManagedFieldsEntry): ChangeOwner {
  return {
    manager: entry.manager ?? "",
    operation: entry.operation ?? "",
    ...(entry.time ? { time: entry.time } : {}),
    ...(entry.subresource ? { subresource: entry.subresource } : {}),
  };
}

/** Parts of an object that are the server's or Kubernetes' bookkeeping, not configuration. */
function isBookkeeping(path: Path): boolean {
  const [top, field] = path;
  if (top === "status" || top === "apiVersion" || top === "kind") return true;
  return top === "metadata" && field !== "labels" && field !== "annotations";
}

/** A pod spec's deprecated `serviceAccount`: the server mirrors it from `serviceAccountName`. */
function isMirror(path: Path): boolean {
  return path.at(-1) === "serviceAccount" && path.at(-2) === "spec";
}

/**
 * Additions made under names not trusted for them, outermost first and never nested: a whole added
 * container, not each of its fields. `desired` is normalized (nulls dropped: `null` in Git declares
 * nothing); `live` carries `metadata.managedFields`. `skip` leaves locations out (ignoreDifferences,
 * metadata keys the comparison ignores). An addition stops short of anything a manager is trusted
 * for inside it, unless the addition is security-relevant itself (an added container goes whole).
 */
export function foreignAdditions(
  desired: unknown,
  live: KubeObject,
  trust: readonly TrustedManager[],
  skip: (path: Path) => boolean = () => false,
): ForeignAddition[] {
  const kind = live.kind ?? "";
  const protectedPaths: Path[] = [];
  const foreign: Array<{ entry: ManagedFieldsEntry; fields: OwnedField[]; untrusted: OwnedField[] }> = [];
  for (const entry of managedEntries(live.metadata?.managedFields)) {
    if (entry.subresource === "status") continue;
    const fields = fieldsV1Paths(entry.fieldsV1, live).filter((f) => getAt(live, f.path) !== undefined);
    const trusted = (f: OwnedField) => isTrustedFor(entry.manager ?? "", f.path, kind, trust);
    protectedPaths.push(...fields.filter(trusted).map((f) => f.path));
    const untrusted = fields.filter((f) => !trusted(f));
    if (untrusted.length > 0) foreign.push({ entry, fields, untrusted });
  }
  const isProtected = (at: Path) => protectedPaths.some((p) => startsWith(p, at));
  const found = new Map<string, ForeignAddition>();
  for (const { entry, fields, untrusted } of foreign) {
    // Built on first need: most untrusted fields (Git declares them) never ask.
    let listedPointers: Set<string> | undefined;
    const listed = () => {
      listedPointers ??= new Set(fields.map((f) => pointerOf(f.path)));
      return listedPointers;
    };
    const left = (p: Path) => isBookkeeping(p) || isTrustedPath(p) || isMirror(p) || skip(p);
    // Removing a location must not take along anything left out of the comparison.
    const holdsLeftOut = (at: Path) => fields.some((f) => startsWith(f.path, at) && left(f.path));
    for (const { path, leaf } of untrusted) {
      if (!leaf || left(path)) continue;
      const { matched } = counterpartPath(path, live, desired);
      // Declared by Git: a changed value is the comparison's to report.
      if (matched === path.length) continue;
      // From the first location Git does not declare down to the field: the outermost one this
      // manager created itself and nobody trusted shares.
      let point: Path | undefined;
      for (let n = matched + 1; n <= path.length; n++) {
        const candidate = path.slice(0, n);
        if (n < path.length && !listed().has(pointerOf(candidate))) continue;
        // A security-relevant addition (a container) goes whole, whatever is trusted or ignored inside.
        const whole = isSecurityField(candidate, kind);
        if (!whole && (isProtected(candidate) || holdsLeftOut(candidate))) continue;
        point = candidate;
        break;
      }
      if (!point || skip(point)) continue;
      const pointer = pointerOf(point);
      if (!found.has(pointer)) found.set(pointer, { path: point, pointer, owner: ownerOf(entry) });
    }
  }
  const all = [...found.values()];
  return all
    .filter((a) => !all.some((b) => b !== a && b.path.length < a.path.length && startsWith(a.path, b.path)))
    .sort((a, b) => comparePaths(a.path, b.path));
}

/** Document order: map keys as strings, list positions numerically. */
export function comparePaths(a: Path, b: Path): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}
