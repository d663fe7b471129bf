// apps/StatefulSet, after kubectl's `rollout status` and Argo CD's gitops-engine.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { count, fieldsAt, generation, optionalNumber, spec, status, text } from "./fields.ts";

export function statefulSetHealth(obj: KubeObject): Health {
  const s = spec(obj);
  const st = status(obj);
  const observed = count(st, "observedGeneration");
  // A StatefulSet's controller always writes observedGeneration; 0 means it has not looked yet.
  if (observed === 0 || generation(obj) > observed) {
    return { status: "Progressing", message: "Waiting for statefulset spec update to be observed..." };
  }

  const desired = optionalNumber(s, "replicas");
  const ready = count(st, "readyReplicas");
  const updated = count(st, "updatedReplicas");
  if (desired !== undefined && ready < desired) {
    return { status: "Progressing", message: `Waiting for ${desired - ready} pods to be ready...` };
  }

  const strategy = fieldsAt(s, "updateStrategy");
  const strategyType = text(strategy, "type") || "RollingUpdate";
  // The API server defaults rollingUpdate.partition to 0: pods with an ordinal >= partition are updated,
  // so a rollout is complete once `replicas - partition` pods run the new revision (and all are ready).
  const partition = optionalNumber(fieldsAt(strategy, "rollingUpdate"), "partition");
  if (strategyType === "RollingUpdate" && partition !== undefined && desired !== undefined) {
    const toUpdate = Math.max(desired - partition, 0);
    if (updated < toUpdate) {
      const what = partition > 0 ? "partitioned roll out" : "roll out";
      return {
        status: "Progressing",
        message: `Waiting for ${what} to finish: ${updated} out of ${toUpdate} new pods have been updated...`,
      };
    }
    if (partition > 0) {
      return {
        status: "Healthy",
        message: `Partitioned roll out complete: ${updated} new pods have been updated (pods below ordinal ${partition} keep the old revision)`,
      };
    }
    return { status: "Healthy", message: `Roll out complete: ${updated} pods updated and ready` };
  }

  if (strategyType === "OnDelete") {
    // Pods are replaced only when someone deletes them: nothing to wait for.
    return { status: "Healthy", message: `statefulset has ${ready} ready pods (${updated} updated)` };
  }

  const currentRevision = text(st, "currentRevision");
  const updateRevision = text(st, "updateRevision");
  if (updateRevision !== currentRevision) {
    return {
      status: "Progressing",
      message: `Waiting for statefulset rolling update to complete: ${updated} pods at revision ${updateRevision}...`,
    };
  }
  return {
    status: "Healthy",
    message: `statefulset rolling update complete: ${count(st, "currentReplicas")} pods at revision ${currentRevision}`,
  };
}
