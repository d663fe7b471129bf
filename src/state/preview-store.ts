// Durable records of pull-request previews: one ConfigMap per preview in syncward's state
// namespace, so a restarted (or another) replica knows which previews run, which wait, which
// namespace each one owns (its uid) and which are half torn down. Written with optimistic
// concurrency: a put with a stale resourceVersion fails instead of losing another writer's update.
//
// Storage format (ConfigMap `syncward-preview-<readable>-<hash>`):
//   labels:      app.kubernetes.io/managed-by=syncward, syncward.dev/preview-record=true
//   annotations: syncward.dev/preview=<key, exactly>
//   data:        preview.json = JSON of PreviewRecord
import type { KubeClient } from "../kube/client.ts";
import type { Destination } from "../kube/clusters.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { MANAGED_BY_LABEL, sanitizeName, shortHash } from "./store.ts";

export const PREVIEW_RECORD_LABEL = "syncward.dev/preview-record";
export const PREVIEW_KEY_ANNOTATION = "syncward.dev/preview";
const DATA_KEY = "preview.json";

export type PreviewPhase = "queued" | "live" | "tearingDown";

export interface PreviewRecord {
  /** `owner/repo#number:from`, unique per preview (preview-queue.ts). */
  key: string;
  repository: { owner: string; repo: string; id: number };
  installation: number;
  pull: number;
  /** The template's `from`: the environment the preview copies. */
  from: string;
  namespace: string;
  /**
   * The cluster the namespace is on, as the preview's environment named it when it started:
   * teardown goes there even after a restart, whatever the template says now. `{}`: syncward's
   * own cluster. Absent only in records written before it was kept.
   */
  destination?: Destination;
  head: { branch: string; sha: string };
  phase: PreviewPhase;
  requestedAt: string;
  /** When the pull request last moved (opened, pushed to): the TTL counts from here. */
  lastMovedAt: string;
  /** The uid of the namespace syncward created for this preview: the only one it ever deletes. */
  namespaceUid?: string;
  deploymentId?: number;
  /** The commit deploymentId is of (absent in records from before it was kept: the head then). */
  deployedSha?: string;
  commentId?: number;
  /** The last failure: of a sync, or of the teardown's last attempt (what it waits for). */
  lastError?: string;
  /**
   * A random token of this record's, written into it before syncward creates the preview's
   * namespace and put on that namespace (annotation syncward.dev/preview-claim): a namespace
   * carrying it is the one a start made for this record before it could record the uid (a crash,
   * a failure), and is taken as the preview's (preview-namespace.ts).
   */
  claim?: string;
  /**
   * Starts begun from the queue: each start writes it one higher (a write that must find the
   * record as read) before it creates anything, so of two starts of one queued preview at once
   * (two teardowns finishing together, two replicas) one goes on and the other leaves it.
   */
  launches?: number;
  /**
   * When (ISO time) the installation's admission decision let this queued preview start
   * (preview-admission.ts), written with its launch: from then on it holds a place in the
   * operator's limits while its namespace is made, and no other start touches it for a while. A
   * start that fails gives the place back; one that died with its replica is decided again later.
   */
  admitted?: string;
  /** Failed syncs in a row; with phase tearingDown, the teardown's attempts that did not finish it. */
  attempts: number;
  /**
   * The pull request's head the preview does not follow, and why (someone without the template's
   * permission pushed it): the preview stays at `head` until a head that qualifies comes.
   */
  held?: { sha: string; reason: string };
  /** Why it is being torn down (with phase tearingDown): a resumed teardown says the same. */
  stopping?: string;
  /**
   * The repository left the installation (or GitHub has it no more): the teardown deletes what it
   * created and says nothing on GitHub, which would refuse the comment and the deployment status.
   */
  repositoryGone?: boolean;
}

/** A record as stored, with the resourceVersion a put must name to replace it. */
export interface StoredPreview {
  record: PreviewRecord;
  resourceVersion: string;
}

/** A put lost a race: someone else wrote the record since it was read. Read again and retry. */
export class PreviewConflictError extends Error {
  constructor(key: string) {
    super(`the preview record of ${key} changed since it was read`);
    this.name = "PreviewConflictError";
  }
}

export function previewKey(fullName: string, pull: number, from: string): string {
  return `${fullName.toLowerCase()}#${pull}:${from}`;
}

export function previewConfigMapName(key: string): string {
  return `syncward-preview-${sanitizeName(key, 34)}-${shortHash(key)}`;
}

export class PreviewStore {
  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
  ) {}

  async list(): Promise<StoredPreview[]> {
    const { items } = await this.client.list("v1", "ConfigMap", {
      namespace: this.namespace,
      labelSelector: `${PREVIEW_RECORD_LABEL}=true`,
    });
    return items.flatMap((cm) => {
      const stored = parse(cm);
      return stored ? [stored] : [];
    });
  }

  async get(key: string): Promise<StoredPreview | undefined> {
    const cm = await this.client.get("v1", "ConfigMap", this.namespace, previewConfigMapName(key));
    return cm && parse(cm);
  }

  /**
   * Creates the record (`resourceVersion` undefined) or replaces the one read at `resourceVersion`.
   * @throws PreviewConflictError when it exists (create) or changed since (replace).
   */
  async put(record: PreviewRecord, resourceVersion?: string): Promise<StoredPreview> {
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: previewConfigMapName(record.key),
        namespace: this.namespace,
        labels: { [MANAGED_BY_LABEL]: "syncward", [PREVIEW_RECORD_LABEL]: "true" },
        annotations: { [PREVIEW_KEY_ANNOTATION]: record.key },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      data: { [DATA_KEY]: JSON.stringify(record) },
    };
    try {
      const written = resourceVersion ? await this.client.replace(cm) : await this.client.create(cm);
      return { record, resourceVersion: written.metadata.resourceVersion ?? "" };
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 409) throw new PreviewConflictError(record.key);
      throw err;
    }
  }

  /**
   * Deletes the record; false when it was already gone. `resourceVersion`: only the record as it
   * was read, never one someone wrote since (false then too).
   */
  async delete(key: string, resourceVersion?: string): Promise<boolean> {
    try {
      return await this.client.delete(
        {
          apiVersion: "v1",
          group: "",
          kind: "ConfigMap",
          name: previewConfigMapName(key),
          namespace: this.namespace,
        },
        "background",
        undefined,
        resourceVersion,
      );
    } catch (err) {
      if (resourceVersion && err instanceof KubeApiError && err.status === 409) return false;
      throw err;
    }
  }
}

/** A record, or undefined for a ConfigMap that holds none readable (it is skipped, not overwritten). */
function parse(cm: KubeObject): StoredPreview | undefined {
  const text = (cm.data as Record<string, string> | undefined)?.[DATA_KEY];
  const record = text === undefined ? undefined : parsePreviewRecord(text);
  return record && { record, resourceVersion: cm.metadata.resourceVersion ?? "" };
}

/**
 * The record in `text`, or undefined when it is none. A destination that is not an object (written
 * by hand, say) is dropped, so the record reads as one from before destinations were kept.
 */
export function parsePreviewRecord(text: string): PreviewRecord | undefined {
  let record: PreviewRecord;
  try {
    record = JSON.parse(text) as PreviewRecord;
  } catch {
    return undefined;
  }
  if (typeof record !== "object" || record === null) return undefined;
  if (typeof record.key !== "string" || typeof record.pull !== "number") return undefined;
  const { destination, ...rest } = record;
  if (typeof destination !== "object" || destination === null || Array.isArray(destination)) return rest;
  return { ...rest, destination: destinationOf(destination) };
}

/** The fields of a destination that name its cluster (`{}`: syncward's own cluster). */
export function destinationOf(d: object): Destination {
  const { cluster, context, inCluster } = d as Record<string, unknown>;
  return {
    ...(typeof cluster === "string" && cluster ? { cluster } : {}),
    ...(typeof context === "string" && context ? { context } : {}),
    ...(inCluster === true ? { inCluster } : {}),
  };
}
