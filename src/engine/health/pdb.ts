// policy/PodDisruptionBudget, as Argo CD's built-in check reads it: the disruption controller's
// `DisruptionAllowed` condition. Too few healthy pods to allow a disruption (InsufficientPods) is
// a normal state while pods start or for a budget that forbids evictions on purpose, so it is not
// a failure; a controller that could not compute the budget (SyncFailed) is.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, isFalse } from "./conditions.ts";
import { joinParts } from "./fields.ts";

export function pdbHealth(obj: KubeObject): Health {
  const conditions = conditionsOf(obj);
  const last = conditions.at(-1);
  if (!last) return { status: "Progressing", message: "Waiting for the disruption controller's status" };
  const failed = conditions.find((c) => isFalse(c) && c.reason !== "InsufficientPods");
  if (failed) {
    return {
      status: "Degraded",
      message: joinParts(`PodDisruptionBudget has ${failed.reason}`, failed.message),
    };
  }
  return { status: "Healthy", message: `PodDisruptionBudget has ${last.reason}` };
}
