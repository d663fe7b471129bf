// The comparison's differences with who made them, plus what untrusted managers added where Git
// declares nothing. Only for live objects that carry managedFields (a file given to `syncward
// diff` may not): without them nobody can be named, and the plain subset comparison stands.
import type { KubeObject } from "../../kube/object.ts";
import { fieldOwnersOf, startsWith } from "./field-managers-of.ts";
import { fieldsV1Paths, managedEntries } from "./fields-v1.ts";
import { foreignAdditions, ownerOf, pointerOf } from "./foreign-fields.ts";
import { globMatch } from "./glob.ts";
import { ignoredLocations, rulesFor } from "./ignore-rules.ts";
import { getAt, parsePointer, resolveTokens } from "./json-pointer.ts";
import { isSecret, normalizeObject, SERVER_ANNOTATIONS } from "./normalize.ts";
import { mayHoldSecurityField } from "./security-fields.ts";
import {
  claimedTrust,
  isTrustedFor,
  OWN_MANAGER,
  spoofingOf,
  type TrustedManager,
  trustList,
} from "./trusted-managers.ts";
import type { CompareOptions, Difference, Path } from "./types.ts";

const MASK = "********";

/**
 * The pairs trusted for this object: the built-in ones, the environment's trustedManagers, and
 * its matching rules' managedFieldsManagers (trusted for every field: Argo CD's meaning, but, as
 * for every name, never for a security-relevant one).
 */
export function trustedFor(desired: KubeObject, live: KubeObject, options: CompareOptions): TrustedManager[] {
  const rules = rulesFor(options.ignoreDifferences ?? [], desired, live);
  const ignoring = rules
    .flatMap((r) => r.managedFieldsManagers ?? [])
    .map((manager) => ({ manager, paths: [""] }));
  return [...trustList(options.trustedManagers), ...ignoring];
}

/** Whether some manager owns a field its name is not trusted for (syncward: a security-relevant one). */
function mayHaveUntrusted(live: KubeObject, trust: readonly TrustedManager[]): boolean {
  const kind = live.kind ?? "";
  return managedEntries(live.metadata?.managedFields).some((e) => {
    if (e.subresource === "status") return false;
    const manager = e.manager ?? "";
    if (manager !== OWN_MANAGER && claimedTrust(manager, trust).length === 0) return true;
    // syncward's own name is untrusted only for security-relevant fields: the rest of its subtree
    // (a CRD's whole schema) need not be walked.
    const within = manager === OWN_MANAGER ? (p: Path) => mayHoldSecurityField(p, kind) : undefined;
    return fieldsV1Paths(e.fieldsV1, live, within).some(
      (f) => !isTrustedFor(manager, f.path, kind, trust) && getAt(live, f.path) !== undefined,
    );
  });
}

function tokensAt(live: KubeObject, pointer: string): Path {
  const tokens = parsePointer(pointer);
  return resolveTokens(live, tokens) ?? tokens;
}

export function attributeDifferences(
  differences: Difference[],
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions,
): Difference[] {
  if (!Array.isArray(live.metadata?.managedFields) || live.metadata.managedFields.length === 0)
    return differences;
  const trust = trustedFor(desired, live, options);
  const kind = live.kind ?? desired.kind ?? "";
  // The common case, an object only syncward and Kubernetes' controllers wrote within their pairs: nothing to add.
  const untrusted = mayHaveUntrusted(live, trust);
  if (!untrusted && differences.every((d) => d.kind === "missing")) return differences;
  const out: Difference[] = [];
  for (const d of differences) {
    if (d.kind === "missing") {
      out.push(d);
      continue;
    }
    const at = tokensAt(live, d.path);
    const owners = fieldOwnersOf(live, d.path)
      .map(ownerOf)
      .map((o) => ({ ...o, trusted: isTrustedFor(o.manager, at, kind, trust) }))
      // syncward's own name on a value Git declares differently: Git moved on since it applied
      // (a preview, a sync) or, in a heal, someone wrote under its name (the trail tells).
      .filter((o) => o.manager !== OWN_MANAGER || (!o.trusted && d.kind !== "changed"));
    // A list item only trusted managers (or nobody: a server default) put there is theirs, not drift.
    if (d.kind === "extra" && owners.every((o) => o.trusted)) continue;
    out.push(withOwners(d, owners, at, kind, trust));
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
  for (const addition of foreignAdditions(d, live, trust, skip)) {
    const owner = { ...addition.owner, trusted: false };
    const existing = out.findIndex((x) => x.path === addition.pointer);
    if (existing >= 0) {
      const x = out[existing] as Difference;
      out[existing] = x.owners?.length ? x : withOwners(x, [owner], addition.path, kind, trust);
      continue;
    }
    const value = getAt(live, addition.path);
    const added: Difference = {
      path: pointerOf(addition.path),
      kind: "added",
      live:
        secret && (addition.path[0] === "data" || addition.path[0] === "stringData") ? mask(value) : value,
    };
    out.push(withOwners(added, [owner], addition.path, kind, trust));
  }
  return out;
}

/** `d` with its owners, and the spoofing finding when a trusted name claims what it is not trusted for. */
function withOwners(
  d: Difference,
  owners: NonNullable<Difference["owners"]>,
  at: Path,
  kind: string,
  trust: readonly TrustedManager[],
): Difference {
  if (owners.length === 0) return d;
  const spoofed = owners
    .filter((o) => !o.trusted)
    .map((o) => spoofingOf(o.manager, d.path, at, kind, trust))
    .find((s) => s !== undefined);
  return { ...d, owners, ...(spoofed ? { spoofed } : {}) };
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
