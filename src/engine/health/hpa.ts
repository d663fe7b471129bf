// autoscaling/HorizontalPodAutoscaler (v1, v2), as Argo CD's gitops-engine reads it: conditions in
// the order the controller lists them, and the first that names a known failure or a known good
// state decides. So `AbleToScale: SucceededRescale` ahead of `ScalingActive: FailedGetResourceMetric`
// (metrics not served yet, the first minute after a rollout) is Healthy, as in Argo CD.
// v2 keeps conditions in status; v1 carries them as JSON in an annotation.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { type Condition, conditionsFrom, conditionsOf } from "./conditions.ts";

const V1_CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions";

/** `type/reason` pairs gitops-engine treats as failures. */
const DEGRADED = new Set([
  "AbleToScale/FailedGetScale",
  "AbleToScale/FailedUpdateScale",
  "ScalingActive/FailedGetResourceMetric",
  "ScalingActive/InvalidSelector",
]);

/** `type/reason` pairs gitops-engine treats as working autoscaling. */
const HEALTHY = new Set([
  "AbleToScale/SucceededRescale",
  "ScalingLimited/DesiredWithinRange",
  "ScalingLimited/TooFewReplicas",
  "ScalingLimited/TooManyReplicas",
]);
// `ScalingActive: ScalingDisabled` (the target is at zero replicas) is none of them: "Waiting to
// Autoscale", as gitops-engine's hpa-v2-progressing case.

const WAITING: Health = { status: "Progressing", message: "Waiting to Autoscale" };

function hpaConditions(obj: KubeObject): Condition[] | { error: string } {
  const fromStatus = conditionsOf(obj);
  if (fromStatus.length > 0) return fromStatus;
  const annotation = obj.metadata.annotations?.[V1_CONDITIONS_ANNOTATION];
  if (annotation === undefined) return [];
  try {
    return conditionsFrom(JSON.parse(annotation));
  } catch (err) {
    return { error: `cannot read the ${V1_CONDITIONS_ANNOTATION} annotation: ${(err as Error).message}` };
  }
}

function withMessage(status: Health["status"], message: string): Health {
  return message ? { status, message } : { status };
}

export function hpaHealth(obj: KubeObject): Health {
  const conditions = hpaConditions(obj);
  if (!Array.isArray(conditions)) return { status: "Unknown", message: conditions.error };
  for (const c of conditions) {
    const key = `${c.type}/${c.reason}`;
    if (DEGRADED.has(key)) return withMessage("Degraded", c.message);
    if (HEALTHY.has(key)) return withMessage("Healthy", c.message);
  }
  return WAITING;
}
