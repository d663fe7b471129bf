// Waiting for health between waves, with a deadline: Degraded stops the sync, and so does time.
import type { KubeClient } from "../kube/client.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import { assessHealth } from "./health/index.ts";
import type { Health } from "./result.ts";
import type { SyncRequest } from "./sync.ts";

/** Polls until every object is Healthy (or has no health notion); Degraded or the deadline stops it. */
export async function waitHealthy(
  client: KubeClient,
  objects: KubeObject[],
  request: SyncRequest,
  wave: number,
): Promise<string | undefined> {
  const deadline = Date.now() + (request.healthTimeoutMs ?? 300_000);
  let pending = objects;
  while (pending.length > 0) {
    const states = await mapLimit(pending, 16, async (o) => {
      const live = await client.get(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
      return { o, health: live ? assessHealth(live) : ({ status: "Missing" } as Health) };
    });
    const degraded = states.find((s) => s.health?.status === "Degraded");
    if (degraded)
      return `${kubectlName(keyOf(degraded.o))} is Degraded${degraded.health?.message ? `: ${degraded.health.message}` : ""}`;
    pending = states.filter((s) => s.health && s.health.status !== "Healthy").map((s) => s.o);
    if (pending.length === 0) break;
    request.onProgress?.({ type: "waiting", wave, pending: pending.map((o) => kubectlName(keyOf(o))) });
    if (Date.now() > deadline) {
      return `timed out waiting for ${pending.map((o) => kubectlName(keyOf(o))).join(", ")} to become healthy`;
    }
    await sleep(500, request.signal);
  }
  return undefined;
}
