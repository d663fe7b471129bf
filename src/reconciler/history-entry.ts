// How one operation is written into an environment's history, and the plan lines a live check
// run shows. Pure.
import type { Plan } from "../engine/plan.ts";
import type { SyncOutcome } from "../engine/sync.ts";
import { keyOf, kubectlName } from "../kube/object.ts";
import type { HistoryEntry, Trigger } from "../state/types.ts";

export function historyEntryOf(
  trigger: Trigger,
  actor: string,
  outcome: SyncOutcome,
  drifted?: string[],
): Omit<HistoryEntry, "id"> {
  return {
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    revision: outcome.revision,
    trigger,
    actor,
    result: outcome.phase,
    message: outcome.message,
    counts: {
      created: outcome.totals.created,
      configured: outcome.totals.configured,
      pruned: outcome.totals.pruned,
      failed: outcome.totals.failed,
    },
    drifted,
    ...hooksOf(outcome),
    ...crdsOf(outcome),
  };
}

/** The CRDs the operation created or changed: an automatic rollback does not go back past them. */
function crdsOf(outcome: SyncOutcome): Pick<HistoryEntry, "crds"> {
  const crds = outcome.resources
    .filter(
      (r) =>
        r.kind === "CustomResourceDefinition" &&
        r.group === "apiextensions.k8s.io" &&
        (r.action === "created" || r.action === "configured"),
    )
    .map((r) => r.name);
  return crds.length > 0 ? { crds } : {};
}

/** Each hook the operation ran (or skipped), with its phase, wave and outcome. */
function hooksOf(outcome: SyncOutcome): Pick<HistoryEntry, "hooks"> {
  const hooks = outcome.resources.flatMap((r) =>
    r.hook
      ? [{ kind: r.kind, name: r.name, phase: r.hook.phase, wave: r.wave ?? 0, outcome: r.hook.outcome }]
      : [],
  );
  return hooks.length > 0 ? { hooks } : {};
}

/** What a plan will do, one kubectl-style line per object (the first 50), for live check runs. */
export function plannedLines(plan: Plan): string[] {
  const lines = [
    ...plan.steps
      .flatMap((st) => st.tasks)
      .map((t) => `${kubectlName(keyOf(t.obj))} ${t.action === "create" ? "create" : "configure"}`),
    ...plan.prunes.map((p) => `${kubectlName(keyOf(p.live))} prune`),
  ];
  return lines.slice(0, 50);
}
