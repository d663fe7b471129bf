// Which field managers' changes are not drift, and for which fields. A manager's name is a claim
// anyone with kubectl can make (`--field-manager=kube-controller-manager`), so trust is given per
// (manager, paths) pair: Kubernetes' own control loops for what they write to keep a workload
// running (an HPA's replica count through the scale subresource, a PVC's bound volume), a
// configured autoscaler for its replica count. A field outside a manager's pairs is drift like
// any other, and security-relevant fields (security-fields.ts) are never trusted by name.
import { globMatch } from "./glob.ts";
import { parsePointer } from "./json-pointer.ts";
import { isSecurityField } from "./security-fields.ts";
import type { Path } from "./types.ts";

/** syncward's own field manager: what it applied, and what admission added to its requests. */
export const OWN_MANAGER = "syncward";

/** A manager (glob, as in metadata.managedFields) trusted for fields at or below `paths` (JSON pointers; a `*` token matches any key or index). */
export interface TrustedManager {
  manager: string;
  paths: string[];
}

/** `kubectl rollout restart` writes this into the pod template: reverting it would restart again and undo a deliberate restart. */
export const RESTARTED_AT = "kubectl.kubernetes.io/restartedAt";

/**
 * Built-in pairs: what Kubernetes' controllers write into objects syncward manages. The
 * controller manager runs every built-in controller (the HPA included) under one name. The
 * kubelet and the API server write only status, which is never compared.
 */
export const BUILT_IN_TRUST: readonly TrustedManager[] = [
  {
    manager: "kube-controller-manager",
    paths: [
      "/spec/replicas",
      "/spec/volumeName",
      "/metadata/annotations/deployment.kubernetes.io~1*",
      "/metadata/annotations/pv.kubernetes.io~1*",
      "/metadata/annotations/volume.kubernetes.io~1*",
      "/metadata/annotations/volume.beta.kubernetes.io~1*",
      // A ServiceAccount token Secret Git declares: the token controller fills these in.
      "/data/token",
      "/data/ca.crt",
      "/data/namespace",
    ],
  },
  { manager: "kube-scheduler", paths: ["/metadata/annotations/volume.kubernetes.io~1selected-node"] },
  {
    manager: "kubectl-rollout",
    paths: [`/spec/template/metadata/annotations/${RESTARTED_AT.replace("/", "~1")}`],
  },
];

/** What a bare name in `trustedManagers` is trusted for: an autoscaler's replica count, labels and annotations. */
export const BARE_NAME_PATHS: readonly string[] = [
  "/spec/replicas",
  "/metadata/labels/*",
  "/metadata/annotations/*",
];

/** A `trustedManagers` entry as pairs: a bare name gets BARE_NAME_PATHS. */
export function asTrustedManager(entry: string | TrustedManager): TrustedManager {
  return typeof entry === "string" ? { manager: entry, paths: [...BARE_NAME_PATHS] } : entry;
}

/** The built-in pairs and the configured ones, in that order. */
export function trustList(configured: ReadonlyArray<string | TrustedManager> = []): TrustedManager[] {
  return [...BUILT_IN_TRUST, ...configured.map(asTrustedManager)];
}

/** Whether a pointer pattern covers `path`: each of its tokens matches (globs), and the path may go deeper. */
export function patternCovers(pattern: string, path: Path): boolean {
  const tokens = parsePointer(pattern);
  if (tokens.length > path.length) return false;
  return tokens.every((t, i) => t === "*" || globMatch(t, String(path[i])));
}

/**
 * Whether a change at `path` (of an object of `kind`) made under the name `manager` is trusted:
 * one of its pairs covers the path and the field is not security-relevant. syncward's own name
 * covers every field but the security-relevant ones, whose values are compared with the render.
 */
export function isTrustedFor(
  manager: string,
  path: Path,
  kind: string,
  trust: readonly TrustedManager[],
): boolean {
  if (isSecurityField(path, kind)) return false;
  if (manager === OWN_MANAGER) return true;
  return trust.some((t) => globMatch(t.manager, manager) && t.paths.some((p) => patternCovers(p, path)));
}

/** The pairs a manager's name claims (empty for a name nobody trusts; syncward's own name claims the render). */
export function claimedTrust(manager: string, trust: readonly TrustedManager[]): TrustedManager[] {
  return trust.filter((t) => globMatch(t.manager, manager));
}

/**
 * Why a change at `path` that `manager` made looks like someone using a trusted name, or
 * undefined when the name is trusted for it or trusted for nothing (an ordinary intruder).
 * syncward's own name is judged where the render compared is the deployed one (revertTrail): in
 * a preview, a field syncward applied before and Git no longer declares is no intrusion.
 */
export function spoofingOf(
  manager: string,
  pointer: string,
  path: Path,
  kind: string,
  trust: readonly TrustedManager[],
): string | undefined {
  if (manager === OWN_MANAGER || isTrustedFor(manager, path, kind, trust)) return undefined;
  const pairs = claimedTrust(manager, trust);
  if (pairs.length === 0) return undefined;
  const paths = [...new Set(pairs.flatMap((p) => p.paths))];
  const why = isSecurityField(path, kind)
    ? "a security-relevant field no manager name is trusted for"
    : "outside its trusted paths";
  return `claims the trusted manager name ${manager} (trusted only for ${paths.join(", ")}), but ${pointer} is ${why}`;
}

/** The finding for a security-relevant field under syncward's own name that differs from the deployed render. */
export function ownNameClaim(pointer: string): string {
  return `claims syncward's own name, but ${pointer} differs from the render syncward deployed`;
}

/** Fields that are never drift, whoever set them. */
export function isTrustedPath(path: Path): boolean {
  const n = path.length;
  return n >= 2 && path[n - 1] === RESTARTED_AT && path[n - 2] === "annotations" && path[0] === "spec";
}
