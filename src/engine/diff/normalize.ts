// What the API server adds or rewrites on its own is taken out of both sides before comparing, so
// that a freshly applied object compares equal to Git.
import type { KubeObject } from "../../kube/object.ts";
import { groupOf } from "../../kube/object.ts";
import { globMatch } from "./glob.ts";
import { isPlainObject } from "./json-pointer.ts";

const SERVER_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "generation",
  "creationTimestamp",
  "selfLink",
];
export const SERVER_ANNOTATIONS = [
  "kubectl.kubernetes.io/last-applied-configuration",
  "deployment.kubernetes.io/revision",
];

/** A deep copy of a JSON value in which `null` map values are dropped (`null` in desired means absent). */
export function cloneWithoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneWithoutNulls);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const v = value[key];
      if (v === null || v === undefined) continue;
      out[key] = cloneWithoutNulls(v);
    }
    return out;
  }
  return value;
}

export function isSecret(obj: KubeObject | undefined): boolean {
  return obj !== undefined && obj.kind === "Secret" && groupOf(obj.apiVersion ?? "") === "";
}

/**
 * A normalized deep copy: server-owned metadata, `status`, the last-applied and revision
 * annotations, and the listed metadata keys are gone; `null` means absent; a Secret's `stringData`
 * is folded into `data` (base64) as the API server does.
 */
export function normalizeObject(obj: KubeObject, ignoreMetadataKeys: readonly string[] = []): KubeObject {
  // status and managedFields are most of a live object: leave them out before the deep copy, not after.
  const { status: _status, ...kept } = obj as KubeObject & { status?: unknown };
  if (isPlainObject(obj.metadata)) {
    const metadata: Record<string, unknown> = { ...obj.metadata };
    for (const field of SERVER_METADATA) delete metadata[field];
    (kept as Record<string, unknown>).metadata = metadata;
  }
  const out = cloneWithoutNulls(kept) as KubeObject;
  const meta = isPlainObject(out.metadata) ? out.metadata : undefined;
  if (meta) {
    for (const field of ["annotations", "labels"] as const) {
      const map = meta[field];
      if (!isPlainObject(map)) continue;
      for (const key of Object.keys(map)) {
        const drop =
          (field === "annotations" && SERVER_ANNOTATIONS.includes(key)) ||
          ignoreMetadataKeys.some((pattern) => globMatch(pattern, key));
        if (drop) delete map[key];
      }
      if (Object.keys(map).length === 0) delete meta[field];
    }
  }
  if (isSecret(obj) && isPlainObject(out.stringData)) {
    const data: Record<string, unknown> = isPlainObject(out.data) ? out.data : {};
    for (const [key, value] of Object.entries(out.stringData)) {
      data[key] = Buffer.from(String(value), "utf8").toString("base64");
    }
    out.data = data;
    delete out.stringData;
  }
  return out;
}

/**
 * A Secret value that is `null` in Git (`data.x: null`, `stringData.x: null`, as Helm charts render
 * an unset password) is the empty value, as in gitops-engine, which reads Secret data as bytes: so
 * a live value that is not empty is drift. Where live has no such key the field stays absent (a
 * server-side apply of null leaves it unset, and that is in sync). Mutates `normalized`.
 */
export function secretNullsAsEmpty(desired: KubeObject, normalized: KubeObject, live: KubeObject): void {
  if (!isSecret(desired)) return;
  const liveData = isPlainObject(live.data) ? live.data : {};
  for (const field of ["data", "stringData"] as const) {
    const raw = (desired as Record<string, unknown>)[field];
    if (!isPlainObject(raw)) continue;
    for (const [key, value] of Object.entries(raw)) {
      const current = liveData[key];
      if (value !== null || current === undefined || current === null || current === "") continue;
      const data = isPlainObject(normalized.data) ? normalized.data : {};
      if (!(key in data)) data[key] = "";
      normalized.data = data;
    }
  }
}
