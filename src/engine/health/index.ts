// Health of a live object: one small rule per kind, dispatched by API group and kind, after
// the config's custom Lua checks (Argo CD's resource.customizations), which win for their kinds.
// Kinds without a rule fall back to the `Ready`/`Available` condition convention; kinds
// with neither (ConfigMap, Secret, RBAC...) have no health notion and yield undefined.

import { groupOf, type KubeObject } from "../../kube/object.ts";
import type { Health, HealthStatus } from "../result.ts";
import { apiServiceHealth } from "./apiservice.ts";
import { conditionsHealth } from "./conditions.ts";
import { crdHealth } from "./crd.ts";
import { cronJobHealth } from "./cronjob.ts";
import type { HealthChecks } from "./custom.ts";
import { daemonSetHealth } from "./daemonset.ts";
import { deploymentHealth } from "./deployment.ts";
import { hpaHealth } from "./hpa.ts";
import { ingressHealth } from "./ingress.ts";
import { jobHealth } from "./job.ts";
import { namespaceHealth } from "./namespace.ts";
import { pdbHealth } from "./pdb.ts";
import { podHealth } from "./pod.ts";
import { pvcHealth } from "./pvc.ts";
import { replicaSetHealth } from "./replicaset.ts";
import { rolloutHealth } from "./rollout.ts";
import { serviceHealth } from "./service.ts";
import { statefulSetHealth } from "./statefulset.ts";

interface HealthRule {
  assess: (obj: KubeObject) => Health | undefined;
  /** The rule explains a pending deletion itself (better than the generic "Pending deletion"). */
  ownsDeletion?: boolean;
}

/** Keyed by `group/Kind`; the core group is "". */
const RULES: ReadonlyMap<string, HealthRule> = new Map<string, HealthRule>([
  ["apps/Deployment", { assess: deploymentHealth }],
  ["apps/StatefulSet", { assess: statefulSetHealth }],
  ["apps/DaemonSet", { assess: daemonSetHealth }],
  ["apps/ReplicaSet", { assess: replicaSetHealth }],
  ["/Pod", { assess: podHealth }],
  ["/Service", { assess: serviceHealth }],
  ["/PersistentVolumeClaim", { assess: pvcHealth }],
  ["/Namespace", { assess: namespaceHealth, ownsDeletion: true }],
  ["networking.k8s.io/Ingress", { assess: ingressHealth }],
  ["extensions/Ingress", { assess: ingressHealth }],
  ["batch/Job", { assess: jobHealth }],
  ["batch/CronJob", { assess: cronJobHealth }],
  ["autoscaling/HorizontalPodAutoscaler", { assess: hpaHealth }],
  ["apiregistration.k8s.io/APIService", { assess: apiServiceHealth }],
  ["apiextensions.k8s.io/CustomResourceDefinition", { assess: crdHealth, ownsDeletion: true }],
  ["argoproj.io/Rollout", { assess: rolloutHealth }],
  ["policy/PodDisruptionBudget", { assess: pdbHealth }],
]);

export { compileHealthChecks, customizationKey, type HealthChecks } from "./custom.ts";

/**
 * The health of a live object, or undefined when its kind has no notion of health. `checks`
 * are the config's compiled custom checks (compileHealthChecks); a kind they cover is theirs.
 */
export function assessHealth(obj: KubeObject, checks?: HealthChecks): Health | undefined {
  const rule = RULES.get(`${groupOf(obj.apiVersion)}/${obj.kind}`);
  // As in Argo CD, an object being deleted is Pending deletion before any check runs, custom or not.
  if (obj.metadata.deletionTimestamp && !rule?.ownsDeletion) {
    return { status: "Progressing", message: "Pending deletion" };
  }
  const custom = checks?.assess(obj);
  if (custom) return custom;
  return (rule?.assess ?? conditionsHealth)(obj);
}

/** Most healthy first; a later status is worse. Matches Argo CD's aggregation order. */
export const HEALTH_ORDER: readonly HealthStatus[] = [
  "Healthy",
  "Suspended",
  "Progressing",
  "Missing",
  "Degraded",
  "Unknown",
];

/**
 * The worst health in the list (the first one on ties, so its message is kept), ignoring
 * objects without a health notion; undefined when none has one.
 */
export function worstHealth(list: Array<Health | undefined>): Health | undefined {
  let worst: Health | undefined;
  for (const health of list) {
    if (health && (!worst || HEALTH_ORDER.indexOf(health.status) > HEALTH_ORDER.indexOf(worst.status))) {
      worst = health;
    }
  }
  return worst;
}
