// apps/Deployment, after kubectl's `rollout status` and Argo CD's gitops-engine.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition } from "./conditions.ts";
import { count, generation, generationLags, joinParts, optionalNumber, spec, status } from "./fields.ts";

export function deploymentHealth(obj: KubeObject): Health {
  const s = spec(obj);
  const st = status(obj);
  if (s.paused === true) return { status: "Suspended", message: "Deployment is paused" };

  if (generationLags(obj)) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: the controller has not yet observed generation ${generation(obj)} (observed ${count(st, "observedGeneration")})`,
    };
  }

  const progressing = findCondition(conditionsOf(obj), "Progressing");
  if (progressing?.reason === "ProgressDeadlineExceeded") {
    return {
      status: "Degraded",
      message: joinParts(
        `Deployment "${obj.metadata.name}" exceeded its progress deadline`,
        progressing.message,
      ),
    };
  }

  const desired = optionalNumber(s, "replicas");
  const replicas = count(st, "replicas");
  const updated = count(st, "updatedReplicas");
  const available = count(st, "availableReplicas");
  if (desired !== undefined && updated < desired) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: ${updated} out of ${desired} new replicas have been updated...`,
    };
  }
  if (replicas > updated) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: ${replicas - updated} old replicas are pending termination...`,
    };
  }
  if (available < updated) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: ${available} of ${updated} updated replicas are available...`,
    };
  }
  return { status: "Healthy" };
}
