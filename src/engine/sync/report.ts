// How a sync describes itself: the objects it leaves alone, the message of one that failed, and
// the one-line summary ("2 created, 1 configured, 3 unchanged, 0 pruned").
import { type KubeObject, keyOf, kubectlName } from "../../kube/object.ts";
import type { Assessment } from "../assess.ts";
import { assessHealth, type HealthChecks } from "../health/index.ts";
import type { Plan } from "../plan.ts";
import { emptyTotals, resourceOf } from "../resource-results.ts";
import type { Health, ResourceResult, SyncResult } from "../result.ts";

/** What the render declares but this sync leaves alone: unchanged objects, kept ones, skipped ones. */
export function reportUnapplied(
  assessment: Assessment,
  resources: ResourceResult[],
  totals: SyncResult["totals"],
  checks: HealthChecks | undefined,
) {
  const { plan } = assessment;
  for (const t of plan.unchanged) {
    totals.unchanged++;
    resources.push(
      resourceOf(t.obj, {
        status: "Synced",
        action: "unchanged",
        health: healthOf(t.live, checks),
        message: `${kubectlName(keyOf(t.obj))} unchanged`,
      }),
    );
  }
  for (const p of plan.requiresPruning) {
    resources.push(
      resourceOf(p.live, {
        status: "OutOfSync",
        action: "would prune",
        health: healthOf(p.live, checks),
        message: `${kubectlName(keyOf(p.live))} requires pruning${p.kept ? `, kept (${p.kept})` : " (prune is off)"}`,
      }),
    );
  }
  for (const p of plan.ignoredExtraneous ?? [])
    resources.push(
      resourceOf(p.live, {
        status: "Skipped",
        action: "skipped",
        health: healthOf(p.live, checks),
        message: `${kubectlName(keyOf(p.live))} is no longer declared (IgnoreExtraneous: not OutOfSync)`,
      }),
    );
  for (const s of assessment.skipped) {
    totals.skipped++;
    resources.push(
      resourceOf(
        {
          ...s.obj,
          metadata: { ...s.obj.metadata, name: s.obj.metadata.name || `${s.obj.metadata.generateName}*` },
        },
        { status: "Skipped", action: "skipped", message: `not applied: ${s.reason}` },
      ),
    );
  }
}

export function failedMessage(failed: number, resources: ResourceResult[]): string {
  return `${failed} object(s) failed: ${resources
    .filter((r) => r.status === "Failed")
    .map((r) => r.message)
    .join("; ")}`;
}

export function describe(
  plan: Plan,
  applied: number,
  dryRun: boolean,
  totals = emptyTotals(),
  hooks = 0,
): string {
  const verb = dryRun ? "would apply" : "applied";
  const parts = [`${verb} ${applied} object${applied === 1 ? "" : "s"}`];
  if (!dryRun) parts[0] = `${totals.created} created, ${totals.configured} configured`;
  parts.push(`${plan.unchanged.length} unchanged`);
  parts.push(`${plan.prunes.length} ${dryRun ? "to prune" : "pruned"}`);
  const kept = plan.requiresPruning.filter((p) => p.kept).length;
  const off = plan.requiresPruning.length - kept;
  if (off > 0) parts.push(`${off} require pruning (prune is off)`);
  if (kept > 0) parts.push(`${kept} require pruning, kept by their sync options`);
  if (hooks > 0) parts.push(`${hooks} hook${hooks === 1 ? "" : "s"} ${dryRun ? "would run" : "ran"}`);
  return parts.join(", ");
}

function healthOf(obj: KubeObject | undefined, checks: HealthChecks | undefined): Health | undefined {
  return obj ? assessHealth(obj, checks) : undefined;
}
