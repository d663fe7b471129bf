// One sync attempt of one environment at one revision: prepare, read live, compare, plan, then
// apply wave by wave (waiting for health in between), prune, and report. It never throws for
// problems a person must read: the result says what happened and the cluster is left in a known
// state (a failed wave stops the sync before anything later is applied or anything is pruned).
import type { KubeClient } from "../kube/client.ts";
import { isTransient } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { applySteps, ensureNamespace, runSyncFailHooks } from "./apply.ts";
import { type Assessment, assess } from "./assess.ts";
import { assessHealth } from "./health/index.ts";
import type { KindRef } from "./live.ts";
import type { Plan } from "./plan.ts";
import { ValidationError } from "./prepare.ts";
import { pruneObjects } from "./prune.ts";
import { emptyTotals, errorMessage, resourceOf } from "./resource-results.ts";
import type { Health, ResourceResult, SyncResult } from "./result.ts";
import type { SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";
import { waitHealthy } from "./wait.ts";

export { type Assessment, assess, comparerFor } from "./assess.ts";
export { outcomeWithoutWork } from "./resource-results.ts";
export type { HookMode, ProgressEvent, SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";

export async function syncEnvironment(
  client: KubeClient,
  target: SyncTarget,
  given: SyncRequest,
): Promise<SyncOutcome> {
  const request = { ...given, healthTimeoutMs: given.healthTimeoutMs ?? target.env.syncPolicy.healthTimeout };
  const startedAt = new Date().toISOString();
  const totals = emptyTotals();
  const resources: ResourceResult[] = [];
  const writesBefore = client.counts.writes;
  const finish = (
    phase: SyncResult["phase"],
    message: string,
    retryable = false,
    inventory: KindRef[] = [],
  ): SyncOutcome => ({
    revision: request.revision,
    phase,
    message,
    resources,
    startedAt,
    finishedAt: new Date().toISOString(),
    totals,
    writes: client.counts.writes - writesBefore,
    dryRun: request.dryRun ?? false,
    inventory,
    retryable,
  });

  let assessment: Assessment;
  try {
    assessment = await assess(client, target, request);
  } catch (err) {
    if (err instanceof ValidationError) return finish("Error", `invalid manifests: ${err.message}`);
    return finish("Failed", errorMessage(err), isTransient(err));
  }
  const { plan, tracked } = assessment;
  // A kind syncward may not even read stays out of the inventory: it applied nothing of it.
  const inventory = mergeInventory(
    request.inventory ?? [],
    tracked.filter((o) => !assessment.denied.has(keyString(keyOf(o)))),
  );
  const env = target.env;
  const opts = env.syncPolicy.syncOptions;

  for (const t of plan.unchanged) {
    totals.unchanged++;
    resources.push(
      resourceOf(t.obj, {
        status: "Synced",
        action: "unchanged",
        health: healthOf(t.live),
        message: `${kubectlName(keyOf(t.obj))} unchanged`,
      }),
    );
  }
  for (const p of plan.requiresPruning) {
    resources.push(
      resourceOf(p.live, {
        status: "OutOfSync",
        action: "would prune",
        health: healthOf(p.live),
        message: `${kubectlName(keyOf(p.live))} requires pruning (prune is off)`,
      }),
    );
  }
  const pending = plan.steps.flatMap((s) => s.tasks).filter((t) => !request.only || request.only.has(t.key));

  if (plan.refusal) {
    for (const t of pending)
      resources.push(
        resourceOf(t.obj, { status: "OutOfSync", action: "skipped", message: "not applied: sync refused" }),
      );
    return finish("Refused", plan.refusal, false, request.inventory ?? []);
  }
  if (request.dryRun) {
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
    for (const p of plan.prunes)
      resources.push(
        resourceOf(p.live, {
          status: "OutOfSync",
          action: "would prune",
          message: `${kubectlName(keyOf(p.live))} pruned (dry run)`,
        }),
      );
    if (totals.failed > 0)
      return finish("Failed", failedMessage(totals.failed, resources), false, request.inventory ?? []);
    return finish("Succeeded", describe(plan, pending.length, true), false, request.inventory ?? []);
  }

  try {
    if (pending.length > 0 || plan.prunes.length > 0) await request.onPlan?.(plan);
    if (opts.CreateNamespace) await ensureNamespace(client, env.destination.namespace);
    const failed = await applySteps(client, target, request, plan, pending, resources, totals);
    if (failed) {
      await runSyncFailHooks(client, target, plan.onFail, resources);
      for (const p of plan.prunes)
        resources.push(
          resourceOf(p.live, {
            status: "OutOfSync",
            action: "skipped",
            message: `${kubectlName(keyOf(p.live))} not pruned: the sync failed before pruning`,
          }),
        );
      return finish("Failed", failed.message, failed.retryable, inventory);
    }
    if (plan.prunes.length > 0 && opts.PruneLast) {
      const waited = await waitHealthy(
        client,
        pending.map((t) => t.obj),
        request,
        -1,
      );
      if (waited) return finish("Failed", waited, false, inventory);
    }
    await pruneObjects(client, plan.prunes, opts.PrunePropagationPolicy, request, resources, totals);
  } catch (err) {
    return finish("Failed", errorMessage(err), isTransient(err), inventory);
  }
  if (totals.failed > 0) return finish("Failed", failedMessage(totals.failed, resources), false, inventory);
  return finish("Succeeded", describe(plan, pending.length, false, totals), false, inventory);
}

function failedMessage(failed: number, resources: ResourceResult[]): string {
  return `${failed} object(s) failed: ${resources
    .filter((r) => r.status === "Failed")
    .map((r) => r.message)
    .join("; ")}`;
}

function describe(plan: Plan, applied: number, dryRun: boolean, totals = emptyTotals()): string {
  const verb = dryRun ? "would apply" : "applied";
  const parts = [`${verb} ${applied} object${applied === 1 ? "" : "s"}`];
  if (!dryRun) parts[0] = `${totals.created} created, ${totals.configured} configured`;
  parts.push(`${plan.unchanged.length} unchanged`);
  parts.push(`${plan.prunes.length} ${dryRun ? "to prune" : "pruned"}`);
  if (plan.requiresPruning.length > 0)
    parts.push(`${plan.requiresPruning.length} require pruning (prune is off)`);
  return parts.join(", ");
}

function mergeInventory(previous: KindRef[], tracked: KubeObject[]): KindRef[] {
  const kinds = new Map<string, KindRef>();
  for (const k of [...previous, ...tracked.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind }))]) {
    kinds.set(`${k.apiVersion}|${k.kind}`, { apiVersion: k.apiVersion, kind: k.kind });
  }
  return [...kinds.values()];
}

function healthOf(obj: KubeObject | undefined): Health | undefined {
  return obj ? assessHealth(obj) : undefined;
}
