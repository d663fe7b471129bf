// A preview's namespace: created by syncward for that preview alone, with the operator's
// ResourceQuota and LimitRange in it before anything of the pull request's, and deleted at
// teardown. Which namespace is the preview's is decided by the uid recorded when syncward created
// it (the preview's durable record), never by a label or annotation on the live namespace: anyone
// who can edit a namespace can write those. A namespace that already exists and is not the
// recorded one is refused, so a preview can never take over (or at teardown delete) a namespace
// someone else made, whatever its name.

import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import type { ProjectPreviews } from "../projects/types.ts";

/** For people and queries only (`kubectl get ns -l syncward.dev/preview`): it decides nothing. */
export const PREVIEW_LABEL = "syncward.dev/preview";
export const PREVIEW_OF_ANNOTATION = "syncward.dev/preview-of";
/** The name of the ResourceQuota and LimitRange syncward puts into every preview namespace. */
export const PREVIEW_GUARD_NAME = "syncward-preview";

export type NamespaceReady = { ok: true; uid: string; created: boolean } | { ok: false; reason: string };

/**
 * The preview's namespace, created when missing, with the operator's quota and limits applied.
 * `recordedUid`: the namespace syncward created for this preview before, if any.
 */
export async function preparePreviewNamespace(
  client: KubeClient,
  namespace: string,
  previewOf: string,
  limits: Pick<ProjectPreviews, "resourceQuota" | "limitRange">,
  recordedUid?: string,
): Promise<NamespaceReady> {
  let live = await client.get("v1", "Namespace", undefined, namespace);
  let created = false;
  if (live && live.metadata.uid !== recordedUid) {
    return {
      ok: false,
      reason: `namespace ${namespace} already exists and syncward did not create it for this preview: a preview runs only in a namespace of its own`,
    };
  }
  if (live?.metadata.deletionTimestamp) {
    return { ok: false, reason: `namespace ${namespace} is still being deleted from an earlier preview` };
  }
  if (!live) {
    try {
      live = await client.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: namespace,
          labels: { [PREVIEW_LABEL]: "true" },
          annotations: { [PREVIEW_OF_ANNOTATION]: previewOf },
        },
      });
      created = true;
    } catch (err) {
      // Someone created it between our read and our write: it is theirs, not the preview's.
      if (err instanceof KubeApiError && err.status === 409) {
        return { ok: false, reason: `namespace ${namespace} was created by someone else just now` };
      }
      throw err;
    }
  }
  const uid = live.metadata.uid;
  if (!uid) throw new Error(`the API server returned namespace ${namespace} without a uid`);
  for (const guard of guardsOf(namespace, limits)) await client.apply(guard);
  return { ok: true, uid, created };
}

/**
 * The operator's quota and limits applied again in the preview's namespace (a deleted or edited
 * guard comes back), when it is still the one syncward created for the preview (`uid`). A
 * namespace that is gone, terminating or someone else's is left alone: false.
 */
export async function reapplyPreviewGuards(
  client: KubeClient,
  namespace: string,
  uid: string,
  limits: Pick<ProjectPreviews, "resourceQuota" | "limitRange">,
): Promise<boolean> {
  const live = await client.get("v1", "Namespace", undefined, namespace);
  if (!live || live.metadata.uid !== uid || live.metadata.deletionTimestamp) return false;
  for (const guard of guardsOf(namespace, limits)) await client.apply(guard);
  return true;
}

/** The operator's ResourceQuota and LimitRange for one preview namespace. */
export function guardsOf(
  namespace: string,
  limits: Pick<ProjectPreviews, "resourceQuota" | "limitRange">,
): KubeObject[] {
  const metadata = { name: PREVIEW_GUARD_NAME, namespace, labels: { [PREVIEW_LABEL]: "true" } };
  const out: KubeObject[] = [];
  if (limits.resourceQuota) {
    out.push({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata,
      spec: { hard: limits.resourceQuota.hard },
    });
  }
  if (limits.limitRange) {
    out.push({ apiVersion: "v1", kind: "LimitRange", metadata, spec: { limits: limits.limitRange.limits } });
  }
  return out;
}

export type Teardown = { done: true } | { done: false; waiting: string };

/**
 * Deletes the namespace syncward created for the preview (by its uid: a namespace of that name
 * that is not the recorded one is left alone) and says whether it is gone. Called again until it
 * is: a finalizer or content still being removed is reported, with the API server's reason.
 */
export async function teardownPreviewNamespace(
  client: KubeClient,
  namespace: string,
  uid: string,
): Promise<Teardown> {
  const live = await client.get("v1", "Namespace", undefined, namespace);
  if (!live || live.metadata.uid !== uid) return { done: true };
  if (!live.metadata.deletionTimestamp) {
    try {
      await client.delete(
        { apiVersion: "v1", group: "", kind: "Namespace", name: namespace, namespace: "" },
        "background",
        uid,
      );
    } catch (err) {
      // The precondition failed: the name now belongs to another namespace, which is not ours.
      if (err instanceof KubeApiError && err.status === 409) return { done: true };
      throw err;
    }
  }
  const after = await client.get("v1", "Namespace", undefined, namespace);
  if (!after || after.metadata.uid !== uid) return { done: true };
  return { done: false, waiting: terminatingReason(after) };
}

/** Why a namespace is still terminating, from its status conditions. */
export function terminatingReason(ns: KubeObject): string {
  const conditions = (
    (ns.status as { conditions?: Array<{ type: string; status: string; message?: string }> })?.conditions ??
    []
  ).filter((c) => c.status === "True" && c.message);
  const named =
    conditions.find((c) => c.type === "NamespaceFinalizersRemaining") ??
    conditions.find((c) => c.type === "NamespaceContentRemaining");
  return named?.message ?? `namespace ${ns.metadata.name} is terminating`;
}
