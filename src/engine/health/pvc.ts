// core/v1 PersistentVolumeClaim: the phase says it all.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { fieldsAt, spec, status, text } from "./fields.ts";

export function pvcHealth(obj: KubeObject): Health {
  const phase = text(status(obj), "phase");
  switch (phase) {
    case "Bound":
      return { status: "Healthy" };
    case "Pending": {
      // With a WaitForFirstConsumer storage class a claim stays Pending until a pod uses it;
      // the claim alone cannot tell, so say so instead of staying silent.
      const storageClass = text(spec(obj), "storageClassName");
      const selectedNode = text(fieldsAt(obj.metadata, "annotations"), "volume.kubernetes.io/selected-node");
      const hint = selectedNode
        ? ` (provisioning for node ${selectedNode})`
        : " (a claim whose storage class binds on first consumer waits for a pod to use it)";
      return {
        status: "Progressing",
        message: `Waiting for the claim to be bound${storageClass ? ` by storage class "${storageClass}"` : ""}${hint}`,
      };
    }
    case "Lost":
      return {
        status: "Degraded",
        message: "The claim lost its persistent volume (the volume no longer exists)",
      };
    default:
      return {
        status: "Unknown",
        message: phase ? `Unknown claim phase ${phase}` : "Claim phase is not reported",
      };
  }
}
