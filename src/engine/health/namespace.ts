// core/v1 Namespace. A namespace being deleted stays Terminating until its content is gone;
// its conditions say what is holding it up, which is what a person needs to see.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, isTrue } from "./conditions.ts";
import { status, text } from "./fields.ts";

export function namespaceHealth(obj: KubeObject): Health {
  const phase = text(status(obj), "phase");
  if (obj.metadata.deletionTimestamp || phase === "Terminating") {
    // NamespaceContentRemaining, NamespaceFinalizersRemaining, NamespaceDeletion*Failure...
    const blockers = conditionsOf(obj)
      .filter((c) => c.type.startsWith("Namespace") && isTrue(c) && c.message)
      .map((c) => c.message);
    return {
      status: "Progressing",
      message: blockers.length > 0 ? `Pending deletion: ${blockers.join("; ")}` : "Pending deletion",
    };
  }
  if (phase === "Active") return { status: "Healthy" };
  if (!phase) return { status: "Progressing", message: "Waiting for the namespace to become active" };
  return { status: "Unknown", message: `Unknown namespace phase ${phase}` };
}
