// Safe readers for the untyped parts of a live object. Health rules read `spec` and `status`
// as kubectl prints them: fields the API server leaves at their zero value are often absent,
// so a missing count reads as 0 and a missing string as "".

import type { KubeObject } from "../../kube/object.ts";

export type Fields = Record<string, unknown>;

export function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object at `path` below `root`, or an empty object when any step is missing or not an object. */
export function fieldsAt(root: unknown, ...path: string[]): Fields {
  let current: unknown = root;
  for (const key of path) {
    if (!isFields(current)) return {};
    current = current[key];
  }
  return isFields(current) ? current : {};
}

export function spec(obj: KubeObject): Fields {
  return fieldsAt(obj, "spec");
}

export function status(obj: KubeObject): Fields {
  return fieldsAt(obj, "status");
}

/** A count: absent (or not a number) reads as 0, like the API's omitted zero values. */
export function count(fields: Fields, key: string): number {
  const value = fields[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** An optional number: undefined when absent, so "not set" and "0" stay different. */
export function optionalNumber(fields: Fields, key: string): number | undefined {
  const value = fields[key];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function text(fields: Fields, key: string): string {
  const value = fields[key];
  return typeof value === "string" ? value : "";
}

export function list(fields: Fields, key: string): unknown[] {
  const value = fields[key];
  return Array.isArray(value) ? value : [];
}

/** `metadata.generation`, 0 when absent (an object that never reached the API server). */
export function generation(obj: KubeObject): number {
  const value = obj.metadata.generation;
  return typeof value === "number" ? value : 0;
}

/** True when the controller has not yet seen the latest spec (`status.observedGeneration` lags). */
export function generationLags(obj: KubeObject): boolean {
  return generation(obj) > count(status(obj), "observedGeneration");
}

/** Joins the non-empty (trimmed) parts with ": ", so a missing reason or message leaves no dangling colon. */
export function joinParts(...parts: Array<string | undefined>): string {
  return parts
    .map((p) => p?.trim() ?? "")
    .filter((p) => p !== "")
    .join(": ");
}
