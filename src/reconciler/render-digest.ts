// A digest of what a revision renders, independent of key order: two revisions with the same
// digest would apply the same objects (hooks included), so moving between them needs nobody.
import { createHash } from "node:crypto";
import type { KubeObject } from "../kube/object.ts";

export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

export function renderDigest(objects: readonly KubeObject[]): string {
  const lines = objects.map((o) => JSON.stringify(canonical(o))).sort();
  return createHash("sha256").update(lines.join("\n")).digest("hex");
}
