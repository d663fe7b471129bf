// One sync attempt of one environment at one revision, as named phases (sync/): assess (prepare,
// read live, compare, plan), scope (what this sync applies and which hooks run), then either a
// preview (refused, or a dry run) or the server-side dry run and the writes: apply wave by wave
// (waiting for health in between), prune, and report. It never throws for problems a person must
// read: the result says what happened and the cluster is left in a known state (a failed wave
// stops the sync before anything later is applied or anything is pruned).

import type { KubeClient } from "../kube/client.ts";
import { applyPhase } from "./sync/apply-phase.ts";
import { assessPhase } from "./sync/assess-phase.ts";
import { dryRunPhase, refusedPhase } from "./sync/preview.ts";
import { reportUnapplied } from "./sync/report.ts";
import { startRun } from "./sync/run.ts";
import { scopeOf } from "./sync/scope.ts";
import { serverDryRunPhase } from "./sync/server-dry-run.ts";
import type { SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";

export { type Assessment, assess, comparerFor } from "./assess.ts";
export { outcomeWithoutWork } from "./resource-results.ts";
export { hooksDigestOf } from "./sync/hooks-digest.ts";
export type { HookMode, ProgressEvent, SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";

export async function syncEnvironment(
  unguarded: KubeClient,
  target: SyncTarget,
  given: SyncRequest,
): Promise<SyncOutcome> {
  const run = startRun(unguarded, target, given);
  const assessed = await assessPhase(run);
  if ("outcome" in assessed) return assessed.outcome;
  const scope = scopeOf(assessed.assessment, run.request, run.hooksDigest);
  reportUnapplied(assessed.assessment, run.resources, run.totals, target.health);
  if (scope.plan.refusal) return refusedPhase(run, scope, scope.plan.refusal);
  if (run.request.dryRun) return dryRunPhase(run, scope);
  const rejected = await serverDryRunPhase(run, scope);
  if (rejected) return rejected;
  return applyPhase(run, scope);
}
