// Waiting for health between waves, with a deadline: Degraded stops the sync, and so does time.
import { formatDuration } from "../config/duration.ts";
import type { KubeClient } from "../kube/client.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import { assessHealth, type HealthChecks } from "./health/index.ts";
import type { Health } from "./result.ts";
import type { SyncRequest } from "./types.ts";

const DEFAULT_HEALTH_TIMEOUT_MS = 300_000;
const DETAILED = 5;

/** Polls until every object is Healthy (or has no health notion); Degraded or the deadline stops it. */
export async function waitHealthy(
  client: KubeClient,
  objects: KubeObject[],
  request: SyncRequest,
  wave: number,
  /** The config's custom health checks; absent: built-in rules only. */
  checks?: HealthChecks,
): Promise<string | undefined> {
  const timeoutMs = request.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let pending = objects;
  while (pending.length > 0) {
    const states = await mapLimit(pending, 16, async (o) => {
      const live = await client.get(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
      return { o, health: live ? assessHealth(live, checks) : ({ status: "Missing" } as Health) };
    });
    const degraded = states.find((s) => s.health?.status === "Degraded");
    if (degraded)
      return `${kubectlName(keyOf(degraded.o))} is Degraded${degraded.health?.message ? `: ${degraded.health.message}` : ""}`;
    const waiting = states.filter((s) => s.health && s.health.status !== "Healthy");
    pending = waiting.map((s) => s.o);
    if (pending.length === 0) break;
    request.onProgress?.({ type: "waiting", wave, pending: pending.map((o) => kubectlName(keyOf(o))) });
    if (Date.now() > deadline) return timedOut(waiting, timeoutMs);
    if (request.signal?.aborted)
      return `stopped while waiting for ${pending.map((o) => kubectlName(keyOf(o))).join(", ")}`;
    await sleep(500, request.signal);
  }
  return undefined;
}

/** Names each object still waited for, where it lives, and the state it is stuck in. */
function timedOut(waiting: Array<{ o: KubeObject; health?: Health }>, timeoutMs: number): string {
  const names = waiting.map((s) => kubectlName(keyOf(s.o)));
  const details = waiting.slice(0, DETAILED).map(({ o, health }) => {
    const where = o.metadata.namespace ? ` in namespace ${o.metadata.namespace}` : "";
    const why = health?.message ? `: ${health.message}` : "";
    return `${kubectlName(keyOf(o))}${where} is ${health?.status ?? "Unknown"}${why}`;
  });
  if (waiting.length > DETAILED) details.push(`and ${waiting.length - DETAILED} more`);
  return `timed out waiting for ${names.join(", ")} to become healthy within ${formatDuration(timeoutMs)} (syncPolicy.healthTimeout): ${details.join("; ")}`;
}
