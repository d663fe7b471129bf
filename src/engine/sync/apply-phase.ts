// Phase 5 of a sync: the writes. Apply wave by wave (waiting for health in between), prune after
// the last wave, and report. A failed wave stops the sync before anything later is applied or
// anything is pruned; then the SyncFail hooks run. What each step decides is apply-steps.ts (pure).
import { isTransient } from "../../kube/errors.ts";
import type { KubeObject } from "../../kube/object.ts";
import { ensureNamespace, runWaves } from "../apply.ts";
import { runHooks } from "../hooks/run.ts";
import { pruneInWaves } from "../prune.ts";
import { errorMessage } from "../resource-results.ts";
import type { SyncOutcome } from "../types.ts";
import { waitHealthy } from "../wait.ts";
import { type Failure, pruneStep, showsPlan, unprunedResults, withSyncFailHooks } from "./apply-steps.ts";
import { describe, failedMessage } from "./report.ts";
import { finish, type SyncRun } from "./run.ts";
import { type SyncScope, withNotes } from "./scope.ts";

export async function applyPhase(run: SyncRun, scope: SyncScope): Promise<SyncOutcome> {
  const { client, target, request, resources, totals } = run;
  const { plan, pending, changes, hooks, inventory } = scope;
  const env = target.env;
  let pruned = false;
  const failed = (why: Failure) => failSync(run, scope, why, pruned);
  try {
    if (showsPlan(changes, hooks.length)) await request.onPlan?.(plan);
    if (env.syncPolicy.syncOptions.CreateNamespace)
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
      (applied) =>
        pruneAfterWaves(run, scope, applied, () => {
          pruned = true;
        }),
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

/**
 * After the last wave: the prunes (pruneStep), once what was applied is Healthy where a prune is
 * marked PruneLast; `starting` is told before the first delete. Why it stopped, if it did.
 */
async function pruneAfterWaves(
  run: SyncRun,
  scope: SyncScope,
  applied: KubeObject[],
  starting: () => void,
): Promise<Failure | undefined> {
  const { client, target, request, resources, totals } = run;
  const prunes = scope.plan.prunes;
  const step = pruneStep(prunes);
  if (step === "none") return undefined;
  if (step === "afterHealthy") {
    const waited = await waitHealthy(client, applied, request, -1, target.health);
    if (waited) return { message: waited, retryable: false };
  }
  starting();
  const propagation = target.env.syncPolicy.syncOptions.PrunePropagationPolicy;
  const stuck = await pruneInWaves({ client, propagation, request, resources, totals }, prunes);
  return stuck ? { message: stuck, retryable: false } : undefined;
}

/** A failed sync: the prunes it did not reach are reported, its SyncFail hooks run, and it ends Failed. */
async function failSync(run: SyncRun, scope: SyncScope, why: Failure, pruned: boolean): Promise<SyncOutcome> {
  if (!pruned) run.resources.push(...unprunedResults(scope.plan.prunes));
  const ran =
    scope.onFailure.length > 0
      ? await runHooks(run.client, run.target, scope.onFailure, run.request, run.resources)
      : [];
  return finish(
    run,
    "Failed",
    withNotes(scope, withSyncFailHooks(why.message, ran)),
    why.retryable,
    scope.inventory,
  );
}
