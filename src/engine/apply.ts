// Running a plan's waves: in each phase and wave, server-side apply kind group by kind group (each
// group concurrently), Namespaces and CRDs established before the rest of their wave, the wave's
// hooks run to completion, and the wave healthy before the next one starts.
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import { isTransient, KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import { ignoredValuesFromLive } from "./diff/index.ts";
import { assessHealth } from "./health/index.ts";
import type { HookTask } from "./hooks/plan.ts";
import { hookNotRun, runHooks } from "./hooks/run.ts";
import { waveOf } from "./order.ts";
import type { ApplyTask, Plan } from "./plan.ts";
import { errorMessage, originOf, resourceOf, skipAll } from "./resource-results.ts";
import type { ResourceResult, SyncResult } from "./result.ts";
import { assertReverted, removeForeignAdditions } from "./revert/index.ts";
import { type Slot, slotsOf } from "./slots.ts";
import { mayRecreate, resourceOptionsOf } from "./sync-options.ts";
import type { SyncRequest, SyncTarget } from "./types.ts";
import { waitHealthy } from "./wait.ts";

/** An object the assessment already found forbidden: failed like a refused apply, without asking again. */
class ForbiddenObject extends Error {}

export async function ensureNamespace(
  client: KubeClient,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<void> {
  if (await client.get("v1", "Namespace", undefined, name)) return;
  try {
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name, ...metadata } });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

/** Validate=true (the default) makes unknown or duplicate fields an error, as kubectl --validate=strict does. */
export function validationFor(env: EnvironmentConfig, obj?: KubeObject): "Strict" | "Ignore" {
  if (obj && resourceOptionsOf(obj).validate === false) return "Ignore";
  return env.syncPolicy.syncOptions.Validate ? "Strict" : "Ignore";
}

export interface Applied {
  obj: KubeObject;
  /** Replace=true: written with PUT (or created) instead of server-side apply. */
  replaced?: boolean;
  /** Deleted and created again (an immutable field, with Force=true or --force). */
  recreated?: boolean;
}

async function recreate(client: KubeClient, obj: KubeObject, write: () => Promise<KubeObject>) {
  const k = keyOf(obj);
  await client.delete({ ...k, apiVersion: obj.apiVersion }, "foreground");
  const deadline = Date.now() + 60_000;
  while (await client.get(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name)) {
    if (Date.now() > deadline)
      throw new Error(`${kubectlName(k)} was deleted for recreation but is still there after 60s`);
    await sleep(250);
  }
  return write();
}

export async function applyOne(
  client: KubeClient,
  target: SyncTarget,
  task: ApplyTask,
  force: boolean,
): Promise<Applied> {
  const { env } = target;
  const fieldValidation = validationFor(env, task.obj);
  const options = resourceOptionsOf(task.obj);
  let obj = task.obj;
  if (task.live && env.syncPolicy.syncOptions.RespectIgnoreDifferences && env.ignoreDifferences.length > 0) {
    obj = ignoredValuesFromLive(obj, task.live, env.ignoreDifferences);
  }
  const replace = options.replace ?? env.syncPolicy.syncOptions.Replace;
  // Argo CD deletes to recreate only when forced, and never a CRD, Namespace or PVC (their loss
  // takes every custom resource, every object in it, or the data along).
  const mayForce = (force || options.force === true) && mayRecreate(obj.kind);
  const write = replace
    ? () => (task.live ? client.replace(obj) : client.create(obj))
    : () => client.apply(obj, { fieldValidation });
  try {
    // What untrusted managers added survives an apply (it is theirs): remove it first, then check
    // the result. A replace (PUT) writes the whole object, so it leaves nothing of theirs.
    if (task.live && !replace) await removeForeignAdditions(client, task.obj, task.live, env);
    const written = await write();
    return {
      obj: replace ? written : assertReverted(task.obj, written, env),
      replaced: replace || undefined,
    };
  } catch (err) {
    if (err instanceof KubeApiError && err.immutableField && mayForce) {
      // Gone now: created again (a PUT would find nothing to replace).
      const again = replace ? () => client.create(obj) : write;
      return { obj: await recreate(client, obj, again), recreated: true, replaced: replace || undefined };
    }
    throw err;
  }
}

export interface WaveFailure {
  message: string;
  retryable: boolean;
}

/**
 * Runs every phase and wave in order. `beforePostSync` runs once, after the last Sync wave (or at
 * the end when there is no PostSync wave): where pruning happens. Returns why the sync stopped.
 */
export async function runWaves(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
  plan: Plan,
  pending: ApplyTask[],
  hooks: HookTask[],
  resources: ResourceResult[],
  totals: SyncResult["totals"],
  beforePostSync: (applied: KubeObject[]) => Promise<WaveFailure | undefined>,
): Promise<WaveFailure | undefined> {
  const wanted = new Set(pending.map((t) => t.key));
  const steps = plan.steps
    .map((s) => ({ ...s, tasks: s.tasks.filter((t) => wanted.has(t.key)) }))
    .filter((s) => s.tasks.length > 0);
  const slots = slotsOf(steps, hooks);
  const applied: KubeObject[] = [];
  let pruned = false;
  const stop = (i: number, failure: WaveFailure, from = "an earlier wave failed"): WaveFailure => {
    const later = slots.slice(i + 1);
    skipAll(
      later.flatMap((s) => s.steps.flatMap((st) => st.tasks)),
      from,
      resources,
    );
    for (const h of later.flatMap((s) => s.hooks)) resources.push(hookNotRun(h, `not run: ${from}`));
    return failure;
  };
  // Objects already in sync still belong to their wave: a later wave (or PostSync) waits for them
  // to be healthy too, so a retry cannot step past the wave whose health failed the last attempt.
  const unchecked = new Set(plan.unchanged);
  const earlierHealthy = async (slot: Slot): Promise<string | undefined> => {
    const due = [...unchecked].filter(
      (t) => slot.phase >= 2 || (slot.phase === 1 && waveOf(t.obj) < slot.wave),
    );
    for (const t of due) unchecked.delete(t);
    return due.length > 0
      ? waitHealthy(
          client,
          due.map((t) => t.obj),
          request,
          slot.wave,
          target.health,
        )
      : undefined;
  };
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const earlier = await earlierHealthy(slot);
    if (earlier) return stop(i - 1, { message: earlier, retryable: false }, earlier);
    if (slot.phase >= 2 && !pruned) {
      pruned = true;
      const failed = await beforePostSync(applied);
      if (failed) return stop(i - 1, failed, "the sync failed before PostSync");
    }
    let failure: WaveFailure | undefined;
    for (const step of slot.steps) {
      failure = await applyStep(client, target, request, step, applied, resources, totals);
      if (failure) break;
    }
    if (failure) {
      for (const h of slot.hooks) resources.push(hookNotRun(h, "not run: its wave failed"));
      return stop(i, failure);
    }
    // The wave's hooks run while its resources become healthy; the next wave waits for both.
    const later = i + 1 < slots.length;
    const [runs, problem] = await Promise.all([
      runHooks(client, target, slot.hooks, request, resources),
      later
        ? waitHealthy(
            client,
            slot.steps.flatMap((s) => s.tasks.map((t) => t.obj)),
            request,
            slot.wave,
            target.health,
          )
        : Promise.resolve(undefined),
    ]);
    const failedHooks = runs.filter((r) => r.outcome === "Failed");
    if (failedHooks.length > 0) {
      totals.failed += failedHooks.length;
      return stop(i, {
        message: `${slot.phase === 0 ? "PreSync" : slot.phase === 2 ? "PostSync" : "Sync"} wave ${slot.wave} failed: ${failedHooks
          .map((r) => `${r.task.display.replace(/[^/]*$/, r.name)} hook ${r.message}`)
          .join("; ")}`,
        retryable: false,
      });
    }
    if (problem) return stop(i, { message: problem, retryable: false }, problem);
  }
  if (!pruned) return beforePostSync(applied);
  return undefined;
}

/** One step of a wave: its objects do not depend on each other, so they go concurrently. */
async function applyStep(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
  step: Plan["steps"][number],
  applied: KubeObject[],
  resources: ResourceResult[],
  totals: SyncResult["totals"],
): Promise<WaveFailure | undefined> {
  request.onProgress?.({ type: "wave", wave: step.wave, objects: step.tasks.length });
  const here: KubeObject[] = [];
  let failed = false;
  let retryable = false;
  // Kinds a CRD of this sync, or an operator it started, has just made served: discover again.
  const served = await Promise.all(step.tasks.map((t) => client.resourceFor(t.obj.apiVersion, t.obj.kind)));
  if (step.foundational || served.includes(undefined)) client.forgetDiscovery();
  await mapLimit(step.tasks, request.concurrency ?? 16, async (task) => {
    const name = kubectlName(keyOf(task.obj));
    try {
      if (task.denied) throw new ForbiddenObject(task.denied);
      const done = await applyOne(client, target, task, request.force ?? false);
      here.push(done.obj);
      const action = task.action === "create" ? "created" : "configured";
      totals[action]++;
      const how = done.recreated
        ? " (deleted and recreated: immutable field)"
        : done.replaced
          ? " (replaced)"
          : "";
      resources.push(
        resourceOf(task.obj, {
          status: "Synced",
          action,
          health: assessHealth(done.obj, target.health),
          drifted: task.drifted.length > 0 ? task.drifted : undefined,
          wave: step.wave,
          message: `${name} ${action}${how}${task.sharedWith ? ` (taken over from ${task.sharedWith})` : ""}`,
        }),
      );
      request.onProgress?.({ type: "applied", key: task.key, action });
    } catch (err) {
      failed = true;
      retryable ||= isTransient(err);
      totals.failed++;
      resources.push(
        resourceOf(task.obj, {
          status: "Failed",
          action: "failed",
          wave: step.wave,
          message: `${name}${originOf(request.origins, task.obj)} failed: ${errorMessage(err)}`,
        }),
      );
    }
  });
  applied.push(...here);
  if (failed)
    return {
      message: `wave ${step.wave} failed: ${resources
        .filter((r) => r.status === "Failed")
        .map((r) => r.message)
        .join("; ")}`,
      retryable,
    };
  // CRDs established and Namespaces active before anything in the wave may use them.
  if (step.foundational) {
    const problem = await waitHealthy(client, here, request, step.wave, target.health);
    client.forgetDiscovery();
    if (problem) return { message: problem, retryable: false };
  }
  return undefined;
}
