// core/v1 Service: only a LoadBalancer needs something from the cluster (an address).

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { fieldsAt, list, spec, status, text } from "./fields.ts";

export function serviceHealth(obj: KubeObject): Health {
  if (text(spec(obj), "type") !== "LoadBalancer") return { status: "Healthy" };
  const ingress = list(fieldsAt(status(obj), "loadBalancer"), "ingress");
  if (ingress.length === 0) {
    return { status: "Progressing", message: "Waiting for the load balancer to be assigned an address" };
  }
  return { status: "Healthy" };
}
