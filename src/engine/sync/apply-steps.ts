// What the writes of a sync (apply-phase.ts) decide, apart from doing them: whether the plan is
// shown, how the prune follows the waves, and what a failed sync says of the prunes it did not
// reach and of its SyncFail hooks. Pure, with table tests.
import { keyOf, kubectlName } from "../../kube/object.ts";
import type { HookRun } from "../hooks/run.ts";
import type { PruneTask } from "../plan.ts";
import { resourceOf } from "../resource-results.ts";
import type { ResourceResult } from "../result.ts";

/** Why a sync failed, and whether a retry may help. */
export interface Failure {
  message: string;
  retryable: boolean;
}

/** The plan is shown (the sync's live check run) when it writes something or runs a hook. */
export function showsPlan(changes: number, hooks: number): boolean {
  return changes > 0 || hooks > 0;
}

/**
 * How the prune follows the last wave: nothing to prune; at once; or once the applied objects are
 * Healthy, when a prune is marked PruneLast (deleted after the last Sync wave, before PostSync).
 */
export function pruneStep(prunes: ReadonlyArray<Pick<PruneTask, "last">>): "none" | "now" | "afterHealthy" {
  if (prunes.length === 0) return "none";
  return prunes.some((p) => p.last) ? "afterHealthy" : "now";
}

/** The prunes a failed sync did not get to, each reported OutOfSync and skipped. */
export function unprunedResults(prunes: ReadonlyArray<Pick<PruneTask, "live">>): ResourceResult[] {
  return prunes.map((p) =>
    resourceOf(p.live, {
      status: "OutOfSync",
      action: "skipped",
      message: `${kubectlName(keyOf(p.live))} not pruned: the sync failed before pruning`,
    }),
  );
}

/** A failure's message with its SyncFail hooks' outcomes (Argo CD's: a notification, a rollback). */
export function withSyncFailHooks(
  message: string,
  ran: ReadonlyArray<Pick<HookRun, "name" | "outcome" | "message">>,
): string {
  if (ran.length === 0) return message;
  return `${message}; SyncFail hooks: ${ran.map((r) => `${r.name} ${r.outcome === "Succeeded" ? "succeeded" : r.message}`).join(", ")}`;
}
