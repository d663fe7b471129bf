// One sync attempt of one environment at one revision: prepare, read live, compare, plan, then
// apply wave by wave (waiting for health in between), prune, and report. It never throws for
// problems a person must read: the result says what happened and the cluster is left in a known
// state (a failed wave stops the sync before anything later is applied or anything is pruned).

import type { KubeClient } from "../kube/client.ts";
import { isTransient } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { ensureNamespace, runWaves } from "./apply.ts";
import { type Assessment, assess } from "./assess.ts";
import { dryRunAll } from "./dry-run.ts";
import { assessHealth, type HealthChecks } from "./health/index.ts";
import { hookNotRun, runHooks } from "./hooks/run.ts";
import type { KindRef } from "./live.ts";
import type { Plan } from "./plan.ts";
import { ValidationError } from "./prepare.ts";
import { pruneInWaves } from "./prune.ts";
import { guardWrites, reservedPlaces } from "./reserved.ts";
import { emptyTotals, errorMessage, originOf, resourceOf, skipAll } from "./resource-results.ts";
import type { Health, ResourceResult, SyncResult } from "./result.ts";
import { resourceOptionsOf } from "./sync-options.ts";
import { desiredHash } from "./tracking.ts";
import type { HookMode, SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";
import { waitHealthy } from "./wait.ts";

export { type Assessment, assess, comparerFor } from "./assess.ts";
export { outcomeWithoutWork } from "./resource-results.ts";
export type { HookMode, ProgressEvent, SyncOutcome, SyncRequest, SyncTarget } from "./types.ts";

export async function syncEnvironment(
  unguarded: KubeClient,
  target: SyncTarget,
  given: SyncRequest,
): Promise<SyncOutcome> {
  // The one choke point: every write below (apply, hooks, prune) goes through this view.
  const client = guardWrites(unguarded, reservedPlaces(target.reservedNamespaces));
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
    hooksDigest: assessedDigest,
  });

  let assessedDigest: string | undefined;
  let assessment: Assessment;
  try {
    assessment = request.assessment ?? (await assess(client, target, request));
    assessedDigest = hooksDigestOf(assessment.hooks.map((h) => h.obj));
  } catch (err) {
    if (err instanceof ValidationError) return finish("Error", `${err.heading}: ${err.message}`);
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
  reportUnapplied(assessment, resources, totals, target.health);
  const pending = plan.steps.flatMap((s) => s.tasks).filter((t) => !request.only || request.only.has(t.key));
  const changes = pending.length + plan.prunes.length;
  // Hooks belong to a release: every explicit sync, a new revision only when it changes something,
  // never a self-heal.
  const mode: HookMode = request.only ? "never" : (request.hooks ?? "always");
  // A revision that changes only a hook (a new migration) changes the release: its hooks run too.
  const hooksChanged = request.hooksDigest !== undefined && request.hooksDigest !== assessedDigest;
  const runs = mode === "always" || (mode === "ifChanged" && (changes > 0 || hooksChanged));
  const hooks = runs ? assessment.hooks.filter((h) => h.phase !== "SyncFail") : [];
  const onFailure = mode === "never" ? [] : assessment.hooks.filter((h) => h.phase === "SyncFail");
  const unknown = unknownOptions(tracked);
  const withNotes = (message: string) =>
    unknown.length > 0 ? `${message}; sync options not honoured: ${unknown.join("; ")}` : message;

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
      return finish("Failed", failedMessage(totals.failed, resources), false, request.inventory ?? []);
    return finish(
      "Succeeded",
      withNotes(describe(plan, pending.length, true, totals, hooks.length)),
      false,
      request.inventory ?? [],
    );
  }

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
    return finish("Failed", withNotes(message), why.retryable, inventory);
  };
  const rejected = await dryRunAll(client, target, request, pending, [...hooks, ...onFailure]).catch(
    (err) => [{ obj: undefined, message: errorMessage(err) }],
  );
  if (rejected.length > 0) {
    for (const r of rejected)
      if (r.obj)
        resources.push(
          resourceOf(r.obj, {
            status: "Failed",
            action: "failed",
            message: `${kubectlName(keyOf(r.obj))}${originOf(request.origins, r.obj)} failed a dry run: ${r.message}`,
          }),
        );
    totals.failed += rejected.length;
    skipAll(
      pending.filter((t) => !rejected.some((r) => r.obj === t.obj)),
      "the dry run of this sync failed; nothing was written",
      resources,
    );
    return finish(
      "Failed",
      `dry run failed before any write, nothing changed: ${rejected
        .map((r) =>
          r.obj ? `${kubectlName(keyOf(r.obj))}${originOf(request.origins, r.obj)}: ${r.message}` : r.message,
        )
        .join("; ")}`,
      false,
      request.inventory ?? [],
    );
  }
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
    "Succeeded",
    withNotes(describe(plan, pending.length, false, totals, hooks.length)),
    false,
    inventory,
  );
}

/** What the render declares but this sync leaves alone: unchanged objects, kept ones, skipped ones. */
function reportUnapplied(
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

function unknownOptions(objects: KubeObject[]): string[] {
  return objects.flatMap((o) => {
    const { unknown } = resourceOptionsOf(o);
    return unknown.length > 0 ? [`${kubectlName(keyOf(o))}: ${unknown.join(", ")}`] : [];
  });
}

function failedMessage(failed: number, resources: ResourceResult[]): string {
  return `${failed} object(s) failed: ${resources
    .filter((r) => r.status === "Failed")
    .map((r) => r.message)
    .join("; ")}`;
}

function describe(plan: Plan, applied: number, dryRun: boolean, totals = emptyTotals(), hooks = 0): string {
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

function mergeInventory(previous: KindRef[], tracked: KubeObject[]): KindRef[] {
  const kinds = new Map<string, KindRef>();
  for (const k of [...previous, ...tracked.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind }))]) {
    kinds.set(`${k.apiVersion}|${k.kind}`, { apiVersion: k.apiVersion, kind: k.kind });
  }
  return [...kinds.values()];
}

function healthOf(obj: KubeObject | undefined, checks: HealthChecks | undefined): Health | undefined {
  return obj ? assessHealth(obj, checks) : undefined;
}

/** One fingerprint of hooks as Git declares them: equal for equal declarations, in any order. */
export function hooksDigestOf(hooks: KubeObject[]): string {
  return desiredHash({
    apiVersion: "v1",
    kind: "List",
    metadata: { name: "hooks" },
    items: hooks.map((h) => desiredHash(h)).sort(),
  } as unknown as KubeObject);
}
