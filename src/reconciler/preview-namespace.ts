// A preview's namespace: created by syncward for that preview alone, with the operator's
// ResourceQuota and LimitRange in it before anything of the pull request's, and deleted at
// teardown. Which namespace is the preview's is decided by the uid recorded when syncward created
// it (the preview's durable record), never by a label on the live namespace: anyone who can edit a
// namespace can write those. A namespace that already exists and is not the recorded one is
// refused, so a preview can never take over (or at teardown delete) a namespace someone else made,
// whatever its name. One exception, for the moment between the create and the record: the claim.

import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import type { ProjectPreviews } from "../projects/types.ts";

/** For people and queries only (`kubectl get ns -l syncward.dev/preview`): it decides nothing. */
export const PREVIEW_LABEL = "syncward.dev/preview";
export const PREVIEW_OF_ANNOTATION = "syncward.dev/preview-of";
/**
 * The preview record's claim token (PreviewRecord.claim), on the namespace a start creates. A
 * namespace carrying the record's token is one that start made before it could record the uid
 * (a crash or a failure in between), and is taken as the preview's. An annotation is a claim
 * anyone who can create namespaces could write, so it counts only when it equals the token: random
 * per record (24 bytes), kept in syncward's state namespace and nowhere else before the create,
 * and only for the namespace of that record's name that syncward is about to create, or deletes
 * at the record's teardown.
 */
export const PREVIEW_CLAIM_ANNOTATION = "syncward.dev/preview-claim";
/** The name of the ResourceQuota and LimitRange syncward puts into every preview namespace. */
export const PREVIEW_GUARD_NAME = "syncward-preview";

export type NamespaceReady =
  | { ok: true; uid: string; created: boolean }
  /** `later`: the namespace is this record's and still going after a start that failed: try again later. */
  | { ok: false; reason: string; later?: boolean };

/**
 * The preview's namespace, created when missing, with the operator's quota and limits applied.
 * `recordedUid`: the namespace syncward created for this preview before, if any. `claim`: the
 * record's claim token, put on a namespace created now; a namespace carrying it is taken as the
 * preview's. When the quota or limits cannot be applied, a namespace not recorded yet (created or
 * taken now) is deleted again, by its uid, and the error thrown: nothing of the pull request's may
 * run there without them, and a later start makes a new one.
 */
export async function preparePreviewNamespace(
  client: KubeClient,
  namespace: string,
  previewOf: string,
  limits: Pick<ProjectPreviews, "resourceQuota" | "limitRange">,
  o: { recordedUid?: string; claim?: string } = {},
): Promise<NamespaceReady> {
  let live = await client.get("v1", "Namespace", undefined, namespace);
  let created = false;
  const claimed = o.claim !== undefined && claimOf(live) === o.claim;
  if (live && live.metadata.uid !== o.recordedUid && !claimed) {
    return {
      ok: false,
      reason: `namespace ${namespace} already exists and syncward did not create it for this preview: a preview runs only in a namespace of its own`,
    };
  }
  if (live?.metadata.deletionTimestamp) {
    return claimed && live.metadata.uid !== o.recordedUid
      ? {
          ok: false,
          later: true,
          reason: `namespace ${namespace} is still being deleted after a failed start`,
        }
      : { ok: false, reason: `namespace ${namespace} is still being deleted from an earlier preview` };
  }
  if (!live) {
    try {
      live = await client.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: namespace,
          labels: { [PREVIEW_LABEL]: "true" },
          annotations: {
            [PREVIEW_OF_ANNOTATION]: previewOf,
            ...(o.claim === undefined ? {} : { [PREVIEW_CLAIM_ANNOTATION]: o.claim }),
          },
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
  try {
    for (const guard of guardsOf(namespace, limits)) await client.apply(guard);
  } catch (err) {
    if (uid !== o.recordedUid) await deleteNamespace(client, namespace, uid).catch(() => undefined);
    throw err;
  }
  return { ok: true, uid, created };
}

/**
 * The uid of the namespace a start made for the record whose claim token is `claim` before it
 * could record the uid; undefined when there is none (or it carries another token, or none).
 */
export async function claimedNamespaceUid(
  client: KubeClient,
  namespace: string,
  claim: string,
): Promise<string | undefined> {
  const live = await client.get("v1", "Namespace", undefined, namespace);
  return claimOf(live) === claim ? live?.metadata.uid : undefined;
}

function claimOf(ns: KubeObject | undefined): string | undefined {
  return ns?.metadata.annotations?.[PREVIEW_CLAIM_ANNOTATION];
}

function deleteNamespace(client: KubeClient, namespace: string, uid: string): Promise<boolean> {
  return client.delete(
    { apiVersion: "v1", group: "", kind: "Namespace", name: namespace, namespace: "" },
    "background",
    uid,
  );
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
      await deleteNamespace(client, namespace, uid);
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

/**
 * Why a namespace is still terminating, from its status conditions: the finalizers that remain and
 * the kinds of the objects that remain (what holds it, for the comment and the record).
 */
export function terminatingReason(ns: KubeObject): string {
  const conditions = (
    (ns.status as { conditions?: Array<{ type: string; status: string; message?: string }> })?.conditions ??
    []
  ).filter((c) => c.status === "True" && c.message);
  const named = ["NamespaceFinalizersRemaining", "NamespaceContentRemaining"].flatMap(
    (type) => conditions.find((c) => c.type === type)?.message ?? [],
  );
  return named.length > 0 ? named.join("; ") : `namespace ${ns.metadata.name} is terminating`;
}
