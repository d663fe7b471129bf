// Phase 3 of a sync, for one that writes nothing: refused as a whole by a guard, or a dry run
// (what would be created, configured, pruned and run). Neither reaches the API server again.
import { keyOf, kubectlName } from "../../kube/object.ts";
import { hookNotRun } from "../hooks/run.ts";
import { resourceOf } from "../resource-results.ts";
import type { SyncOutcome } from "../types.ts";
import { describe, failedMessage } from "./report.ts";
import { finish, type SyncRun } from "./run.ts";
import { type SyncScope, withNotes } from "./scope.ts";

/** A guard refused the whole sync (plan.refusal): nothing is applied or deleted. */
export function refusedPhase(run: SyncRun, scope: SyncScope, refusal: string): SyncOutcome {
  for (const t of scope.pending)
    run.resources.push(
      resourceOf(t.obj, { status: "OutOfSync", action: "skipped", message: "not applied: sync refused" }),
    );
  return finish(run, "Refused", refusal, false, run.request.inventory ?? []);
}

export function dryRunPhase(run: SyncRun, scope: SyncScope): SyncOutcome {
  const { resources, totals, request } = run;
  const { plan, pending, hooks } = scope;
  for (const t of pending) {
    if (t.denied) {
      totals.failed++;
      resources.push(
        resourceOf(t.obj, {
          status: "Failed",
          action: "failed",
          message: `${kubectlName(keyOf(t.obj))} failed: ${t.denied}`,
        }),
      );
      continue;
    }
    resources.push(
      resourceOf(t.obj, {
        status: "OutOfSync",
        action: t.action === "create" ? "created" : "configured",
        drifted: t.drifted,
        message: `${kubectlName(keyOf(t.obj))} ${t.action === "create" ? "created" : "configured"} (dry run)`,
      }),
    );
  }
  for (const h of hooks) resources.push(hookNotRun(h, "would run (dry run)"));
  for (const p of plan.prunes)
    resources.push(
      resourceOf(p.live, {
        status: "OutOfSync",
        action: "would prune",
        message: `${kubectlName(keyOf(p.live))} pruned (dry run)`,
      }),
    );
  if (totals.failed > 0)
    return finish(run, "Failed", failedMessage(totals.failed, resources), false, request.inventory ?? []);
  return finish(
    run,
    "Succeeded",
    withNotes(scope, describe(plan, pending.length, true, totals, hooks.length)),
    false,
    request.inventory ?? [],
  );
}
