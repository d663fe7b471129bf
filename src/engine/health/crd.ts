// apiextensions.k8s.io/CustomResourceDefinition: usable once its names are accepted and it
// is Established (the API server serves the new resource).

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isFalse, isTrue } from "./conditions.ts";
import { joinParts } from "./fields.ts";

export function crdHealth(obj: KubeObject): Health {
  const conditions = conditionsOf(obj);
  const terminating = findCondition(conditions, "Terminating");
  if (obj.metadata.deletionTimestamp || isTrue(terminating)) {
    // Deleting a CRD deletes every custom resource of its kind first; say that is what it waits for.
    return {
      status: "Progressing",
      message: joinParts("Pending deletion", isTrue(terminating) ? terminating?.message : ""),
    };
  }
  if (conditions.length === 0)
    return { status: "Progressing", message: "Waiting for the API server to accept the CRD" };

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
    // "Installing" is the short window before the API server starts serving the resource; a
    // name conflict (the other reason it stays unestablished) is reported above.
    return {
      status: "Progressing",
      message: joinParts("Waiting for the CRD to be established", established?.message),
    };
  }
  return { status: "Healthy" };
}
