// The order of a sync, as Argo CD users expect it: phase, then wave, then kind, then name.
import type { KubeObject } from "../kube/object.ts";

export const WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave";
export const HOOK_ANNOTATION = "argocd.argoproj.io/hook";

/** Argo CD's sync phases; an object without a hook annotation belongs to Sync. */
const PHASES: Record<string, number> = { PreSync: 0, Sync: 1, PostSync: 2, SyncFail: 3 };

export function phaseOf(obj: KubeObject): number {
  const hook = obj.metadata.annotations?.[HOOK_ANNOTATION];
  return hook === undefined ? 1 : (PHASES[hook.split(",")[0]?.trim() ?? ""] ?? 1);
}

/** SyncFail hooks run only when a sync fails. */
export function isSyncFailHook(obj: KubeObject): boolean {
  return phaseOf(obj) === 3;
}

const KIND_ORDER = [
  "Namespace",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodSecurityPolicy",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "SecretList",
  "ConfigMap",
  "StorageClass",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleList",
  "ClusterRoleBinding",
  "ClusterRoleBindingList",
  "Role",
  "RoleList",
  "RoleBinding",
  "RoleBindingList",
  "Service",
  "DaemonSet",
  "Pod",
  "ReplicationController",
  "ReplicaSet",
  "Deployment",
  "HorizontalPodAutoscaler",
  "StatefulSet",
  "Job",
  "CronJob",
  "IngressClass",
  "Ingress",
  "APIService",
];
const KIND_RANK = new Map(KIND_ORDER.map((k, i) => [k, i]));

/** Rank of a kind; unknown kinds (custom resources) come after every built-in. */
export function kindRank(kind: string): number {
  return KIND_RANK.get(kind) ?? KIND_ORDER.length;
}

export function waveOf(obj: KubeObject): number {
  const raw = obj.metadata.annotations?.[WAVE_ANNOTATION];
  if (raw === undefined) return 0;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) ? n : 0;
}

/** Kinds that must exist and be established before anything that may depend on them is applied. */
export function isFoundational(obj: KubeObject): boolean {
  return obj.kind === "Namespace" || obj.kind === "CustomResourceDefinition";
}

/**
 * The order `localeCompare` gives, from one collator: `localeCompare` looks its collator up on
 * every call, which was most of the CPU a plan's sort of a few hundred objects took.
 */
const byLocale = new Intl.Collator().compare;

export function compareForSync(a: KubeObject, b: KubeObject): number {
  return (
    phaseOf(a) - phaseOf(b) ||
    waveOf(a) - waveOf(b) ||
    kindRank(a.kind) - kindRank(b.kind) ||
    byLocale(a.metadata.namespace ?? "", b.metadata.namespace ?? "") ||
    byLocale(a.metadata.name, b.metadata.name)
  );
}
