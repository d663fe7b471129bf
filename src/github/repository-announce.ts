// Which repositories the replicas run, written on the apps' Leases: GitHub delivers an install, a
// repository added or unarchived to one replica only, and the others (which run a standby runtime
// of every repository, ready to take its Lease) would never hear of it. The replica that starts a
// repository's runtime marks the app's Lease with the repository (creating the Lease, free, when
// nobody has held it yet); every replica's shard watches the Leases and starts the runtime of a
// marked app it does not run. A repository stopped for good has the mark taken off again.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { appLeaseName } from "../reconciler/reconciler.ts";
import type { RepoInfo } from "./runtime.ts";

export const REPOSITORY_ANNOTATION = "syncward.dev/repository";
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
  const name = appLeaseName(app);
  const mark = info && JSON.stringify({ ...info });
  for (let attempt = 0; attempt < 5; attempt++) {
    const lease = await client.get(LEASE_API, "Lease", namespace, name);
    const annotations = { ...(lease?.metadata.annotations ?? {}) };
    if ((annotations[REPOSITORY_ANNOTATION] ?? undefined) === mark) return;
    if (mark) annotations[REPOSITORY_ANNOTATION] = mark;
    else delete annotations[REPOSITORY_ANNOTATION];
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
