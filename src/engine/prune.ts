// Pruning: deleting managed objects Git no longer declares, with the configured propagation,
// in the order the plan gives (the reverse of applying). A failed delete is reported, not hidden.
import type { KubeClient, Propagation } from "../kube/client.ts";
import { keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import type { PruneTask } from "./plan.ts";
import { errorMessage, resourceOf } from "./resource-results.ts";
import type { ResourceResult, SyncResult } from "./result.ts";
import type { SyncRequest } from "./types.ts";

export async function pruneObjects(
  client: KubeClient,
  prunes: PruneTask[],
  propagation: Propagation,
  request: Pick<SyncRequest, "concurrency" | "onProgress">,
  resources: ResourceResult[],
  totals: SyncResult["totals"],
): Promise<void> {
  await mapLimit(prunes, request.concurrency ?? 16, async (p) => {
    const k = keyOf(p.live);
    try {
      await client.delete({ ...k, apiVersion: p.live.apiVersion }, propagation);
      totals.pruned++;
      resources.push(
        resourceOf(p.live, { status: "Pruned", action: "pruned", message: `${kubectlName(k)} pruned` }),
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
}
