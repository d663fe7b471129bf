// Which reverted changes a responder must look at first: what runs (a new container, another
// image), what it may do on the node (privileged, host namespaces, hostPath, added capabilities)
// and whose credentials it holds (the ServiceAccount).
import { isPlainObject, parsePointer } from "../diff/json-pointer.ts";
import { CONTAINER_LISTS, HOST_NAMESPACES, SERVICE_ACCOUNT } from "../diff/security-fields.ts";

/** Why a change at `pointer` whose live value is `value` is security-relevant, or undefined. */
export function securityReason(pointer: string, kind: string, value: unknown): string | undefined {
  const tokens = parsePointer(pointer);
  const last = tokens.at(-1) ?? "";
  const reasons = new Set<string>();
  const listAt = tokens.findLastIndex((t) => CONTAINER_LISTS.has(t));
  if (listAt >= 0 && listAt === tokens.length - 1) reasons.add("new container");
  if (listAt >= 0 && listAt === tokens.length - 2 && kind !== "changed") reasons.add("new container");
  if (last === "image") reasons.add("image changed");
  if (HOST_NAMESPACES.has(last) && value === true) reasons.add("host namespace");
  if (SERVICE_ACCOUNT.has(last)) reasons.add("ServiceAccount changed");
  inspect(last, value, reasons, tokens);
  return reasons.size > 0 ? [...reasons].join(", ") : undefined;
}

/** Looks inside an added value (a container, a securityContext, a volumes list) too. */
function inspect(key: string, value: unknown, reasons: Set<string>, path: string[]): void {
  if (key === "privileged" && value === true) reasons.add("privileged");
  if (key === "allowPrivilegeEscalation" && value === true) reasons.add("privileged");
  if (key === "hostPath" && value !== undefined) reasons.add("hostPath volume");
  if (key === "add" && path.at(-1) === "capabilities") reasons.add("added capabilities");
  if (HOST_NAMESPACES.has(key) && value === true) reasons.add("host namespace");
  if (key === "image" && path.length > 0 && typeof value === "string" && reasons.has("new container"))
    reasons.add(`image ${value}`);
  if (Array.isArray(value)) {
    for (const item of value) inspect("", item, reasons, [...path, key]);
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) inspect(k, v, reasons, key === "" ? path : [...path, key]);
  }
}
