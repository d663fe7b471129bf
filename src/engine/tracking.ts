// How syncward marks what it manages. An object is managed by an environment only when its
// tracking annotation names that environment AND the object itself: an annotation copied onto
// another object (a copied manifest, a generated child) never makes it ours, so prune and
// self-heal never touch it. The label only narrows list requests; the annotation decides.
import { createHash } from "node:crypto";
import {
  type KubeObject,
  keyOf,
  keyString,
  parseKeyString,
  type ResourceKey,
  sameKey,
} from "../kube/object.ts";

export const TRACKING_ANNOTATION = "syncward.dev/tracking-id";
export const HASH_ANNOTATION = "syncward.dev/applied-hash";
export const INSTANCE_LABEL = "syncward.dev/instance";

/** `<instance>:<group>/<kind>:<namespace>/<name>`; instance is `<app>.<environment>`. */
export function trackingId(instance: string, key: ResourceKey): string {
  return `${instance}:${keyString(key)}`;
}

export function parseTrackingId(value: string): { instance: string; key: ResourceKey } | undefined {
  const colon = value.indexOf(":");
  if (colon < 0) return undefined;
  const key = parseKeyString(value.slice(colon + 1));
  return key ? { instance: value.slice(0, colon), key } : undefined;
}

export function isManagedBy(obj: KubeObject, instance: string): boolean {
  const value = obj.metadata.annotations?.[TRACKING_ANNOTATION];
  if (!value) return false;
  const parsed = parseTrackingId(value);
  return parsed !== undefined && parsed.instance === instance && sameKey(parsed.key, keyOf(obj));
}

/** The instance named by a live object's annotation, if it names the object itself. */
export function managingInstance(obj: KubeObject): string | undefined {
  const value = obj.metadata.annotations?.[TRACKING_ANNOTATION];
  const parsed = value ? parseTrackingId(value) : undefined;
  return parsed && sameKey(parsed.key, keyOf(obj)) ? parsed.instance : undefined;
}

/**
 * JSON with every object's keys sorted (undefined values left out), built in one pass: a CRD's
 * schema has hundreds of thousands of keys. Array items that JSON cannot spell become "", as
 * `join` spells them.
 */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      out += canonical(value[i]) ?? "";
    }
    return `${out}]`;
  }
  if (value && typeof value === "object") {
    const object = value as Record<string, unknown>;
    let out = "{";
    let first = true;
    for (const key of Object.keys(object).sort()) {
      const v = object[key];
      if (v === undefined) continue;
      out += `${first ? "" : ","}${JSON.stringify(key)}:${canonical(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

/** Stable hash of what Git declares; a live object carrying the same hash was last applied from it. */
export function desiredHash(obj: KubeObject): string {
  return createHash("sha256").update(canonical(obj)).digest("hex").slice(0, 20);
}

/** The object as syncward applies it: tracking annotation, applied hash and instance label added. */
export function withTracking(obj: KubeObject, instance: string): KubeObject {
  const hash = desiredHash(obj);
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      labels: { ...obj.metadata.labels, [INSTANCE_LABEL]: instance },
      annotations: {
        ...obj.metadata.annotations,
        [TRACKING_ANNOTATION]: trackingId(instance, keyOf(obj)),
        [HASH_ANNOTATION]: hash,
      },
    },
  };
}
