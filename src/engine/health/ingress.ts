// networking.k8s.io/Ingress (and the old extensions/Ingress): Healthy once the ingress
// controller has published an address in status.loadBalancer.ingress.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { fieldsAt, isFields, list, status, text } from "./fields.ts";

export function ingressHealth(obj: KubeObject): Health {
  const ingress = list(fieldsAt(status(obj), "loadBalancer"), "ingress").filter(isFields);
  if (ingress.length === 0) {
    return { status: "Progressing", message: "Waiting for the ingress controller to assign an address" };
  }
  const addresses = ingress.map((i) => text(i, "ip") || text(i, "hostname")).filter((a) => a !== "");
  return addresses.length > 0
    ? { status: "Healthy", message: `Address: ${addresses.join(", ")}` }
    : { status: "Healthy" };
}
