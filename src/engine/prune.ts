// Pruning: deleting managed objects Git no longer declares, as Argo CD orders it: by wave from the
// highest down, each wave's deletions awaited until the objects are gone (finalizers run) before
// the next, and PruneLast objects after every other. A failed delete is reported, not hidden.
import type { KubeClient, Propagation } from "../kube/client.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import type { PruneTask } from "./plan.ts";
import { errorMessage, resourceOf } from "./resource-results.ts";
import type { ResourceResult, SyncResult } from "./result.ts";
import type { SyncRequest } from "./types.ts";

const DEFAULT_GONE_TIMEOUT_MS = 300_000;

type PruneRequest = Pick<SyncRequest, "concurrency" | "onProgress" | "healthTimeoutMs" | "signal">;

/** Groups in the order they are deleted: waves high to low, then the PruneLast ones (also by wave). */
export function pruneGroups(prunes: PruneTask[]): PruneTask[][] {
  const groups = new Map<string, PruneTask[]>();
  for (const p of prunes) {
    const key = `${p.last ? 1 : 0}|${p.wave}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return [...groups.entries()]
    .map(([key, tasks]) => ({ last: key.startsWith("1"), wave: tasks[0]!.wave, tasks }))
    .sort((a, b) => Number(a.last) - Number(b.last) || b.wave - a.wave)
    .map((g) => g.tasks);
}

export interface Pruning {
  client: KubeClient;
  propagation: Propagation;
  request: PruneRequest;
  resources: ResourceResult[];
  totals: SyncResult["totals"];
}

/** Returns why pruning stopped (a group that did not go away), or undefined. */
export async function pruneInWaves(ctx: Pruning, prunes: PruneTask[]): Promise<string | undefined> {
  const { client, request, resources } = ctx;
  const groups = pruneGroups(prunes);
  for (let i = 0; i < groups.length; i++) {
    const deleted = await pruneObjects(ctx, groups[i]!);
    const stuck = await waitGone(client, deleted, request);
    if (stuck) {
      for (const p of groups.slice(i + 1).flat())
        resources.push(
          resourceOf(p.live, {
            status: "OutOfSync",
            action: "skipped",
            message: `${kubectlName(keyOf(p.live))} not pruned: ${stuck}`,
          }),
        );
      return stuck;
    }
  }
  return undefined;
}

async function waitGone(client: KubeClient, objects: KubeObject[], request: PruneRequest) {
  const timeoutMs = request.healthTimeoutMs ?? DEFAULT_GONE_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let left = objects;
  while (left.length > 0) {
    // Gone, or replaced by a new object of the same name (another uid): either way not ours to wait for.
    const still = await mapLimit(left, 16, async (o) => {
      const live = await client.get(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
      return live && (!o.metadata.uid || live.metadata.uid === o.metadata.uid) ? live : undefined;
    });
    const finalizers = still.flatMap((o) => (o?.metadata.finalizers as string[] | undefined) ?? []);
    left = left.filter((_, i) => still[i] !== undefined);
    if (left.length === 0) return undefined;
    if (Date.now() > deadline || request.signal?.aborted)
      return `${left.map((o) => kubectlName(keyOf(o))).join(", ")} still there after deletion (finalizers: ${
        [...new Set(finalizers)].join(", ") || "none"
      })`;
    await sleep(500, request.signal);
  }
  return undefined;
}

/** Deletes concurrently; returns the objects whose delete was accepted. */
async function pruneObjects(ctx: Pruning, prunes: PruneTask[]): Promise<KubeObject[]> {
  const { client, propagation, request, resources, totals } = ctx;
  const deleted: KubeObject[] = [];
  await mapLimit(prunes, request.concurrency ?? 16, async (p) => {
    const k = keyOf(p.live);
    try {
      await client.delete({ ...k, apiVersion: p.live.apiVersion }, propagation);
      deleted.push(p.live);
      totals.pruned++;
      resources.push(
        resourceOf(p.live, {
          status: "Pruned",
          action: "pruned",
          wave: p.wave,
          message: `${kubectlName(k)} pruned`,
        }),
      );
      request.onProgress?.({ type: "pruned", key: p.key });
    } catch (err) {
      totals.failed++;
      resources.push(
        resourceOf(p.live, {
          status: "Failed",
          action: "failed",
          message: `${kubectlName(k)} prune failed: ${errorMessage(err)}`,
        }),
      );
    }
  });
  return deleted;
}
