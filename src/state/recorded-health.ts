// The health an environment's state records after an operation, so that whoever reads the state
// (another replica's metrics, the CLI) sees the health the operation left, not only its sync status.
import { worstHealth } from "../engine/health/index.ts";
import type { Health, SyncResult } from "../engine/result.ts";

const worstStatus = (list: Array<Health | undefined>) => worstHealth(list)?.status;

/**
 * Its resources' worst health; Healthy for a success with nothing to assess; otherwise what it
 * was. A dry run or a refusal (frozen, outside a window) changes nothing in the cluster.
 */
export function healthAfter(
  before: string | undefined,
  outcome: Pick<SyncResult, "phase" | "dryRun" | "resources">,
  worst: (list: Array<Health | undefined>) => string | undefined = worstStatus,
): string | undefined {
  if (outcome.dryRun || outcome.phase === "Refused") return before;
  return (
    worst(outcome.resources.map((r) => r.health)) ?? (outcome.phase === "Succeeded" ? "Healthy" : before)
  );
}
