// apiregistration.k8s.io/APIService: the aggregator's `Available` condition, as Argo CD reads it.
// Not available yet is Progressing: the backing service is usually still starting.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isTrue } from "./conditions.ts";
import { joinParts } from "./fields.ts";

export function apiServiceHealth(obj: KubeObject): Health {
  const available = findCondition(conditionsOf(obj), "Available");
  if (!available)
    return { status: "Progressing", message: "Waiting for the API aggregator to check the service" };
  const detail = joinParts(available.reason, available.message);
  if (isTrue(available)) return detail ? { status: "Healthy", message: detail } : { status: "Healthy" };
  return { status: "Progressing", message: detail || "APIService is not available yet" };
}
