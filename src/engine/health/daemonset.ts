// apps/DaemonSet, after kubectl's `rollout status` and Argo CD's gitops-engine.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { count, fieldsAt, generation, generationLags, spec, status, text } from "./fields.ts";

export function daemonSetHealth(obj: KubeObject): Health {
  const st = status(obj);
  const name = obj.metadata.name;
  if (generationLags(obj)) {
    return {
      status: "Progressing",
      message: `Waiting for rollout to finish: the controller has not yet observed generation ${generation(obj)} (observed ${count(st, "observedGeneration")})`,
    };
  }

  const desired = count(st, "desiredNumberScheduled");
  const updated = count(st, "updatedNumberScheduled");
  const available = count(st, "numberAvailable");
  if (text(fieldsAt(spec(obj), "updateStrategy"), "type") === "OnDelete") {
    // Pods are replaced only when someone deletes them: nothing to wait for.
    return {
      status: "Healthy",
      message: `daemon set ${updated} out of ${desired} new pods have been updated`,
    };
  }
  if (updated < desired) {
    return {
      status: "Progressing",
      message: `Waiting for daemon set "${name}" rollout to finish: ${updated} out of ${desired} new pods have been updated...`,
    };
  }
  // numberUnavailable counts nodes that should run a pod but have none available; kubectl omits it at 0.
  const unavailable = Math.max(count(st, "numberUnavailable"), desired - available);
  if (unavailable > 0) {
    return {
      status: "Progressing",
      message: `Waiting for daemon set "${name}" rollout to finish: ${available} of ${desired} updated pods are available (${unavailable} unavailable)...`,
    };
  }
  return { status: "Healthy" };
}
