// autoscaling/HorizontalPodAutoscaler (v1, v2). v2 keeps conditions in status; v1 carries
// them as JSON in an annotation. Unlike Argo CD, every condition is read before deciding,
// so the order the controller lists them in cannot hide a failure behind `AbleToScale: True`.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import {
  type Condition,
  conditionsFrom,
  conditionsOf,
  findCondition,
  isFalse,
  isTrue,
} from "./conditions.ts";
import { joinParts } from "./fields.ts";

const V1_CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions";

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

/** AbleToScale False with Failed*: the target's scale cannot be read or written. */
function cannotScale(c: Condition): boolean {
  return c.type === "AbleToScale" && isFalse(c) && c.reason.startsWith("Failed");
}

/** ScalingActive False for any reason but ScalingDisabled: metrics or the selector are broken. */
function cannotCompute(c: Condition): boolean {
  return c.type === "ScalingActive" && isFalse(c) && c.reason !== "ScalingDisabled";
}

export function hpaHealth(obj: KubeObject): Health {
  const conditions = hpaConditions(obj);
  if (!Array.isArray(conditions)) return { status: "Unknown", message: conditions.error };

  const broken = conditions.filter((c) => cannotScale(c) || cannotCompute(c));
  if (broken.length > 0) {
    return { status: "Degraded", message: broken.map((c) => joinParts(c.reason, c.message)).join("; ") };
  }

  const ableToScale = findCondition(conditions, "AbleToScale");
  const scalingActive = findCondition(conditions, "ScalingActive");
  if (scalingActive?.reason === "ScalingDisabled") {
    // The target was scaled to zero on purpose; the HPA steps aside until it is scaled up again.
    return {
      status: "Healthy",
      message: scalingActive.message || "Autoscaling is disabled while the target has zero replicas",
    };
  }
  // AbleToScale False with Backoff*: a recent scale keeps the next one in its stabilization window.
  const inBackoff = isFalse(ableToScale) && ableToScale?.reason.startsWith("Backoff") === true;
  if ((isTrue(ableToScale) || inBackoff) && isTrue(scalingActive)) {
    const limited = findCondition(conditions, "ScalingLimited");
    const message = inBackoff
      ? joinParts("Waiting out the scaling backoff window", ableToScale?.message)
      : isTrue(limited)
        ? limited?.message
        : scalingActive?.message;
    return message ? { status: "Healthy", message } : { status: "Healthy" };
  }
  const pending = [ableToScale, scalingActive].find((c) => c && !isTrue(c));
  return {
    status: "Progressing",
    message: pending
      ? joinParts("Waiting to autoscale", pending.reason, pending.message)
      : "Waiting to autoscale",
  };
}
