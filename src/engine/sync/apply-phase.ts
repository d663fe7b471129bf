// Phase 5 of a sync: the writes. Apply wave by wave (waiting for health in between), prune after
// the last wave, and report. A failed wave stops the sync before anything later is applied or
// anything is pruned; then the SyncFail hooks run.
import { isTransient } from "../../kube/errors.ts";
import { keyOf, kubectlName } from "../../kube/object.ts";
import { ensureNamespace, runWaves } from "../apply.ts";
import { runHooks } from "../hooks/run.ts";
import { pruneInWaves } from "../prune.ts";
import { errorMessage, resourceOf } from "../resource-results.ts";
import type { SyncOutcome } from "../types.ts";
import { waitHealthy } from "../wait.ts";
import { describe, failedMessage } from "./report.ts";
import { finish, type SyncRun } from "./run.ts";
import { type SyncScope, withNotes } from "./scope.ts";

export async function applyPhase(run: SyncRun, scope: SyncScope): Promise<SyncOutcome> {
  const { client, target, request, resources, totals } = run;
  const { plan, pending, changes, hooks, onFailure, inventory } = scope;
  const env = target.env;
  const opts = env.syncPolicy.syncOptions;
  let pruned = false;
  const failed = async (why: { message: string; retryable: boolean }): Promise<SyncOutcome> => {
    if (!pruned)
      for (const p of plan.prunes)
        resources.push(
          resourceOf(p.live, {
            status: "OutOfSync",
            action: "skipped",
            message: `${kubectlName(keyOf(p.live))} not pruned: the sync failed before pruning`,
          }),
        );
    let message = why.message;
    if (onFailure.length > 0) {
      // Argo CD's SyncFail hooks (a notification, a rollback): on any failure, awaited and reported.
      const ran = await runHooks(client, target, onFailure, request, resources);
      message += `; SyncFail hooks: ${ran.map((r) => `${r.name} ${r.outcome === "Succeeded" ? "succeeded" : r.message}`).join(", ")}`;
    }
    return finish(run, "Failed", withNotes(scope, message), why.retryable, inventory);
  };
  try {
    if (changes > 0 || hooks.length > 0) await request.onPlan?.(plan);
    if (opts.CreateNamespace)
      await ensureNamespace(client, env.destination.namespace, env.syncPolicy.managedNamespaceMetadata);
    const stopped = await runWaves(
      client,
      target,
      request,
      plan,
      pending,
      hooks,
      resources,
      totals,
      async (applied) => {
        if (plan.prunes.length === 0) return undefined;
        if (plan.prunes.some((p) => p.last)) {
          const waited = await waitHealthy(client, applied, request, -1, target.health);
          if (waited) return { message: waited, retryable: false };
        }
        pruned = true;
        const stuck = await pruneInWaves(
          { client, propagation: opts.PrunePropagationPolicy, request, resources, totals },
          plan.prunes,
        );
        return stuck ? { message: stuck, retryable: false } : undefined;
      },
    );
    if (stopped) return await failed(stopped);
  } catch (err) {
    return failed({ message: errorMessage(err), retryable: isTransient(err) });
  }
  if (totals.failed > 0)
    return failed({ message: failedMessage(totals.failed, resources), retryable: false });
  return finish(
    run,
    "Succeeded",
    withNotes(scope, describe(plan, pending.length, false, totals, hooks.length)),
    false,
    inventory,
  );
}
