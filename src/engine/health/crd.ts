// apiextensions.k8s.io/CustomResourceDefinition: usable once its names are accepted and it
// is Established (the API server serves the new resource).

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isFalse, isTrue } from "./conditions.ts";
import { joinParts } from "./fields.ts";

export function crdHealth(obj: KubeObject): Health {
  const conditions = conditionsOf(obj);
  if (conditions.length === 0)
    return { status: "Progressing", message: "Waiting for the API server to accept the CRD" };

  const terminating = findCondition(conditions, "Terminating");
  if (terminating && isTrue(terminating)) {
    return { status: "Progressing", message: joinParts("CRD is being terminated", terminating.message) };
  }
  const names = findCondition(conditions, "NamesAccepted");
  if (names && isFalse(names)) {
    return {
      status: "Degraded",
      message: joinParts("CRD names have not been accepted", names.message || names.reason),
    };
  }
  const nonStructural = findCondition(conditions, "NonStructuralSchema");
  if (nonStructural && isTrue(nonStructural)) {
    return { status: "Degraded", message: joinParts("CRD schema is not structural", nonStructural.message) };
  }
  const established = findCondition(conditions, "Established");
  if (!isTrue(established)) {
    // "Installing" is the short window before the API server starts serving the resource.
    if (!established || established.reason === "Installing" || established.status === "Unknown") {
      return {
        status: "Progressing",
        message: joinParts("Waiting for the CRD to be established", established?.message),
      };
    }
    return {
      status: "Degraded",
      message: joinParts("CRD is not established", established.message || established.reason),
    };
  }
  return { status: "Healthy" };
}
