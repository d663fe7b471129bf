// One sync attempt of one environment at one revision: prepare, read live, compare, plan, then
// apply wave by wave (waiting for health in between), prune, and report. It never throws for
// problems a person must read: the result says what happened and the cluster is left in a known
// state (a failed wave stops the sync before anything later is applied or anything is pruned).
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import { isTransient, KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import { confirmDrift } from "./confirm-drift.ts";
import { compareObjects, ignoredValuesFromLive } from "./diff/index.ts";
import { assessHealth } from "./health/index.ts";
import { fetchLive, type KindRef } from "./live.ts";
import { type ApplyTask, kindGroups, type Plan, planSync } from "./plan.ts";
import { type PreparedObject, prepareObjects, ValidationError } from "./prepare.ts";
import type { Health, ResourceResult, SyncResult } from "./result.ts";
import { withTracking } from "./tracking.ts";

export interface SyncTarget {
  /** `<app>.<environment>`: names the owner in tracking annotations and labels. */
  instance: string;
  env: EnvironmentConfig;
}

export type ProgressEvent =
  | { type: "wave"; wave: number; objects: number }
  | { type: "applied"; key: string; action: string }
  | { type: "waiting"; wave: number; pending: string[] }
  | { type: "pruned"; key: string };

export interface SyncRequest {
  revision: string;
  /** Rendered from Git at `revision`, untracked and without defaults. */
  objects: KubeObject[];
  /** Prune managed objects Git no longer declares (policy's automated.prune, or `--prune`). */
  prune: boolean;
  dryRun?: boolean;
  /** Delete and recreate on immutable-field errors. */
  force?: boolean;
  overridePruneLimit?: boolean;
  /** Kinds this environment applied before (from its durable state). */
  inventory?: KindRef[];
  /** Only these keys are applied (self-heal re-applies just the drifted objects). */
  only?: Set<string>;
  /** Deadline for health between waves, ms. */
  healthTimeoutMs?: number;
  concurrency?: number;
  onProgress?: (event: ProgressEvent) => void;
  /** Awaited after planning, before the first write, when there is something to apply or prune. */
  onPlan?: (plan: Plan) => Promise<void> | void;
  signal?: AbortSignal;
}

export interface SyncOutcome extends SyncResult {
  /** Kinds now applied, to persist as the next inventory. */
  inventory: KindRef[];
  /** True when the failure is transient (API unavailable, 5xx, 429, timeouts): worth a retry. */
  retryable: boolean;
}

const emptyTotals = () => ({ created: 0, configured: 0, unchanged: 0, pruned: 0, failed: 0, skipped: 0 });

/** The outcome of an operation that stopped before touching the cluster (a render error, a refusal). */
export function outcomeWithoutWork(
  revision: string,
  phase: SyncResult["phase"],
  message: string,
  dryRun = false,
): SyncOutcome {
  const now = new Date().toISOString();
  return {
    revision,
    phase,
    message,
    resources: [],
    startedAt: now,
    finishedAt: now,
    totals: emptyTotals(),
    writes: 0,
    dryRun,
    inventory: [],
    retryable: false,
  };
}

export function comparerFor(env: EnvironmentConfig) {
  return (desired: KubeObject, live: KubeObject) => {
    const c = compareObjects(desired, live, { ignoreDifferences: env.ignoreDifferences });
    return {
      inSync: c.inSync,
      paths: c.differences.map((d) => d.path),
      extraItems: c.differences.some((d) => d.kind === "extra"),
    };
  };
}

function resourceOf(
  obj: KubeObject,
  fields: Omit<ResourceResult, "group" | "kind" | "namespace" | "name">,
): ResourceResult {
  const k = keyOf(obj);
  return { group: k.group, kind: k.kind, namespace: k.namespace, name: k.name, ...fields };
}

function errorMessage(err: unknown): string {
  if (err instanceof KubeApiError && err.immutableField) {
    return `${err.message} (immutable field: sync with --force, or set the Replace=true sync option, to delete and recreate it)`;
  }
  return err instanceof Error ? err.message : String(err);
}

export interface Assessment {
  prepared: PreparedObject[];
  tracked: KubeObject[];
  live: Map<string, KubeObject>;
  plan: Plan;
}

/** Everything short of writing: what a diff, a preview or a dry run shows. */
export async function assess(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
): Promise<Assessment> {
  const { env } = target;
  const prepared = await prepareObjects(client, env, request.objects);
  const tracked = prepared.map((p) => withTracking(p.obj, target.instance));
  const live = await fetchLive(
    client,
    target.instance,
    env.policy.namespaces,
    prepared,
    request.inventory ?? [],
  );
  const opts = env.syncPolicy.syncOptions;
  const planned = planSync({
    instance: target.instance,
    desired: tracked,
    live,
    compare: comparerFor(env),
    prune: request.prune,
    allowEmpty: env.syncPolicy.automated?.allowEmpty ?? false,
    failOnSharedResource: opts.FailOnSharedResource,
    pruneLimit: env.syncPolicy.pruneLimit,
    overridePruneLimit: request.overridePruneLimit,
  });
  const plan = await confirmDrift(client, planned, validationFor(env));
  return { prepared, tracked, live, plan };
}

export async function syncEnvironment(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
): Promise<SyncOutcome> {
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
  const inventory = mergeInventory(request.inventory ?? [], tracked);
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
    await mapLimit(plan.prunes, request.concurrency ?? 16, async (p) => {
      const k = keyOf(p.live);
      try {
        await client.delete({ ...k, apiVersion: p.live.apiVersion }, opts.PrunePropagationPolicy);
        totals.pruned++;
        resources.push(
          resourceOf(p.live, { status: "Pruned", action: "pruned", message: `${kubectlName(k)} pruned` }),
        );
        request.onProgress?.({ type: "pruned", key: p.key });
      } catch (err) {
        totals.failed++;
        resources.push(
          resourceOf(p.live, {
            status: "Failed",
            action: "failed",
            message: `${kubectlName(k)} prune failed: ${errorMessage(err)}`,
          }),
        );
      }
    });
  } catch (err) {
    return finish("Failed", errorMessage(err), isTransient(err), inventory);
  }
  if (totals.failed > 0)
    return finish(
      "Failed",
      `${totals.failed} object(s) failed: ${resources
        .filter((r) => r.status === "Failed")
        .map((r) => r.message)
        .join("; ")}`,
      false,
      inventory,
    );
  return finish("Succeeded", describe(plan, pending.length, false, totals), false, inventory);
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

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  if (await client.get("v1", "Namespace", undefined, name)) return;
  try {
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

/** Validate=true (the default) makes unknown or duplicate fields an error, as kubectl --validate=strict does. */
function validationFor(env: EnvironmentConfig): "Strict" | "Ignore" {
  return env.syncPolicy.syncOptions.Validate ? "Strict" : "Ignore";
}

async function applyOne(
  client: KubeClient,
  target: SyncTarget,
  task: ApplyTask,
  force: boolean,
): Promise<KubeObject> {
  const fieldValidation = validationFor(target.env);
  const { env } = target;
  let obj = task.obj;
  if (task.live && env.syncPolicy.syncOptions.RespectIgnoreDifferences && env.ignoreDifferences.length > 0) {
    obj = ignoredValuesFromLive(obj, task.live, env.ignoreDifferences);
  }
  try {
    return await client.apply(obj, { fieldValidation });
  } catch (err) {
    if (err instanceof KubeApiError && err.immutableField && (force || env.syncPolicy.syncOptions.Replace)) {
      const k = keyOf(obj);
      await client.delete({ ...k, apiVersion: obj.apiVersion }, "foreground");
      const deadline = Date.now() + 60_000;
      while (await client.get(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name)) {
        if (Date.now() > deadline)
          throw new Error(`${kubectlName(k)} was deleted for recreation but is still there after 60s`);
        await sleep(250);
      }
      return client.apply(obj, { fieldValidation });
    }
    throw err;
  }
}

function skipAll(tasks: ApplyTask[], why: string, resources: ResourceResult[]): void {
  for (const t of tasks) {
    resources.push(
      resourceOf(t.obj, {
        status: "OutOfSync",
        action: "skipped",
        message: `${kubectlName(keyOf(t.obj))} not applied: ${why}`,
      }),
    );
  }
}

/** Argo CD's SyncFail hooks: applied, best effort, when a sync fails (a notification Job, a rollback). */
async function runSyncFailHooks(
  client: KubeClient,
  target: SyncTarget,
  hooks: ApplyTask[],
  resources: ResourceResult[],
): Promise<void> {
  for (const hook of hooks) {
    const name = kubectlName(keyOf(hook.obj));
    try {
      await applyOne(client, target, hook, false);
      resources.push(
        resourceOf(hook.obj, {
          status: "Synced",
          action: "created",
          message: `${name} created (SyncFail hook)`,
        }),
      );
    } catch (err) {
      resources.push(
        resourceOf(hook.obj, {
          status: "Failed",
          action: "failed",
          message: `${name} SyncFail hook failed: ${errorMessage(err)}`,
        }),
      );
    }
  }
}

/** Returns undefined on success, or why the sync stopped. */
async function applySteps(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
  plan: Plan,
  pending: ApplyTask[],
  resources: ResourceResult[],
  totals: SyncResult["totals"],
): Promise<{ message: string; retryable: boolean } | undefined> {
  const wanted = new Set(pending.map((t) => t.key));
  const steps = plan.steps
    .map((s) => ({ ...s, tasks: s.tasks.filter((t) => wanted.has(t.key)) }))
    .filter((s) => s.tasks.length > 0);
  let retryable = false;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    request.onProgress?.({ type: "wave", wave: step.wave, objects: step.tasks.length });
    const applied: KubeObject[] = [];
    let stepFailed = false;
    for (const group of kindGroups(step)) {
      if (group[0]?.obj.kind === "CustomResourceDefinition" || step.foundational) client.forgetDiscovery();
      await mapLimit(group, request.concurrency ?? 16, async (task) => {
        const name = kubectlName(keyOf(task.obj));
        try {
          const after = await applyOne(client, target, task, request.force ?? false);
          applied.push(after);
          const action = task.action === "create" ? "created" : "configured";
          totals[action]++;
          resources.push(
            resourceOf(task.obj, {
              status: "Synced",
              action,
              health: assessHealth(after),
              drifted: task.drifted.length > 0 ? task.drifted : undefined,
              wave: step.wave,
              message: `${name} ${action}${task.sharedWith ? ` (taken over from ${task.sharedWith})` : ""}`,
            }),
          );
          request.onProgress?.({ type: "applied", key: task.key, action });
        } catch (err) {
          stepFailed = true;
          retryable ||= isTransient(err);
          totals.failed++;
          resources.push(
            resourceOf(task.obj, {
              status: "Failed",
              action: "failed",
              wave: step.wave,
              message: `${name} failed: ${errorMessage(err)}`,
            }),
          );
        }
      });
      if (stepFailed) break;
    }
    const rest = steps.slice(i + 1).flatMap((s) => s.tasks);
    if (stepFailed) {
      skipAll(rest, "an earlier wave failed", resources);
      return {
        message: `wave ${step.wave} failed: ${resources
          .filter((r) => r.status === "Failed")
          .map((r) => r.message)
          .join("; ")}`,
        retryable,
      };
    }
    // Wait for what later steps may depend on: CRDs established and namespaces active, or a whole
    // wave healthy before the next wave starts.
    const next = steps[i + 1];
    const waveEnds = next !== undefined && (next.wave !== step.wave || next.phase !== step.phase);
    if (step.foundational || waveEnds) {
      const toWait = waveEnds
        ? steps
            .filter((s) => s.wave === step.wave && s.phase === step.phase)
            .flatMap((s) => s.tasks.map((t) => t.obj))
        : applied;
      const problem = await waitHealthy(client, toWait, request, step.wave);
      if (problem) {
        skipAll(rest, problem, resources);
        return { message: problem, retryable: false };
      }
      if (step.foundational) client.forgetDiscovery();
    }
  }
  return undefined;
}

/** Polls until every object is Healthy (or has no health notion); Degraded or the deadline stops it. */
async function waitHealthy(
  client: KubeClient,
  objects: KubeObject[],
  request: SyncRequest,
  wave: number,
): Promise<string | undefined> {
  const deadline = Date.now() + (request.healthTimeoutMs ?? 300_000);
  let pending = objects;
  while (pending.length > 0) {
    const states = await mapLimit(pending, 16, async (o) => {
      const live = await client.get(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
      return { o, health: live ? assessHealth(live) : ({ status: "Missing" } as Health) };
    });
    const degraded = states.find((s) => s.health?.status === "Degraded");
    if (degraded)
      return `${kubectlName(keyOf(degraded.o))} is Degraded${degraded.health?.message ? `: ${degraded.health.message}` : ""}`;
    pending = states.filter((s) => s.health && s.health.status !== "Healthy").map((s) => s.o);
    if (pending.length === 0) break;
    request.onProgress?.({ type: "waiting", wave, pending: pending.map((o) => kubectlName(keyOf(o))) });
    if (Date.now() > deadline) {
      return `timed out waiting for ${pending.map((o) => kubectlName(keyOf(o))).join(", ")} to become healthy`;
    }
    await sleep(500, request.signal);
  }
  return undefined;
}
