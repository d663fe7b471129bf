// Which repositories and previews the replicas run, written on the apps' Leases: GitHub delivers
// an install, a repository added or unarchived, a pull request labelled for a preview to one
// replica only, and the others (which run a standby runtime of every repository and a standby
// Reconciler of every live preview, ready to take its Lease) would never hear of it. The replica
// that starts a repository's runtime or a preview marks the app's Lease with it (creating the
// Lease, free, when nobody has held it yet); every replica's shard watches the Leases and starts
// what a marked app it does not run needs. A repository stopped for good has the mark taken off.
//
// Why a preview needs it: a replica takes apps only up to its fair share, so the replica that
// starts a preview may leave its Lease to the others, and they must know of it to take it.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { appLeaseName } from "../reconciler/reconciler.ts";
import type { RepoInfo } from "./runtime.ts";

export const REPOSITORY_ANNOTATION = "syncward.dev/repository";
/** On a preview's app Lease: the preview's key and start (its record says the rest). */
export const PREVIEW_ANNOTATION = "syncward.dev/preview";
const LEASE_API = "coordination.k8s.io/v1";

/** The repository a Lease is marked with, if it is marked and the mark reads. */
export function announcedRepository(lease: KubeObject): RepoInfo | undefined {
  const text = lease.metadata.annotations?.[REPOSITORY_ANNOTATION];
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as Partial<RepoInfo>;
    if (typeof r.owner !== "string" || typeof r.repo !== "string" || typeof r.installationId !== "number")
      return undefined;
    return {
      ...(typeof r.id === "number" ? { id: r.id } : {}),
      owner: r.owner,
      repo: r.repo,
      installationId: r.installationId,
      htmlUrl: String(r.htmlUrl ?? `https://github.com/${r.owner}/${r.repo}`),
      defaultBranch: String(r.defaultBranch ?? "main"),
    };
  } catch {
    return undefined;
  }
}

/**
 * Marks the app's Lease with `info` (undefined: takes the mark off). A conflict with the holder's
 * renewal is read again and retried; nothing is written when the mark is already so.
 */
export async function announceRepository(
  client: KubeClient,
  namespace: string,
  app: string,
  info: RepoInfo | undefined,
): Promise<void> {
  await markLease(client, namespace, app, REPOSITORY_ANNOTATION, info && JSON.stringify({ ...info }));
}

/**
 * Marks a live preview's app Lease with its key and start, so that every replica runs a
 * Reconciler for it. The start makes each start news, even on a Lease a teardown left behind.
 */
export async function announcePreview(
  client: KubeClient,
  namespace: string,
  app: string,
  preview: { key: string; start: number },
): Promise<void> {
  await markLease(client, namespace, app, PREVIEW_ANNOTATION, `${preview.key} (start ${preview.start})`);
}

/** The preview mark of a Lease (its key and start), if any. */
export function announcedPreview(lease: KubeObject): string | undefined {
  return lease.metadata.annotations?.[PREVIEW_ANNOTATION] || undefined;
}

async function markLease(
  client: KubeClient,
  namespace: string,
  app: string,
  annotation: string,
  mark: string | undefined,
): Promise<void> {
  const name = appLeaseName(app);
  for (let attempt = 0; attempt < 5; attempt++) {
    const lease = await client.get(LEASE_API, "Lease", namespace, name);
    const annotations = { ...(lease?.metadata.annotations ?? {}) };
    if ((annotations[annotation] ?? undefined) === mark) return;
    if (mark) annotations[annotation] = mark;
    else delete annotations[annotation];
    try {
      if (!lease) {
        if (!mark) return;
        await client.create({
          apiVersion: LEASE_API,
          kind: "Lease",
          metadata: {
            name,
            namespace,
            labels: { "app.kubernetes.io/managed-by": "syncward" },
            annotations,
          },
          spec: { holderIdentity: "", leaseDurationSeconds: 1 },
        } as KubeObject);
      } else
        await client.replace({
          ...lease,
          apiVersion: LEASE_API,
          kind: "Lease",
          metadata: { ...lease.metadata, annotations },
        });
      return;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
    }
  }
}
