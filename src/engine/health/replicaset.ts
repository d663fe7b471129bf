// apps/ReplicaSet, after Argo CD's gitops-engine.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isTrue } from "./conditions.ts";
import { count, generation, generationLags, joinParts, optionalNumber, spec, status } from "./fields.ts";

export function replicaSetHealth(obj: KubeObject): Health {
  const st = status(obj);
  if (generationLags(obj)) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: the controller has not yet observed generation ${generation(obj)} (observed ${count(st, "observedGeneration")})`,
    };
  }

  // ReplicaFailure: the controller could not create or delete pods (quota, admission webhook...).
  const failure = findCondition(conditionsOf(obj), "ReplicaFailure");
  if (failure && isTrue(failure)) {
    return { status: "Degraded", message: failure.message || joinParts("ReplicaFailure", failure.reason) };
  }

  const desired = optionalNumber(spec(obj), "replicas");
  const available = count(st, "availableReplicas");
  if (desired !== undefined && available < desired) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: ${available} out of ${desired} new replicas are available...`,
    };
  }
  return { status: "Healthy" };
}
