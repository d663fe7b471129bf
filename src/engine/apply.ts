// Applying a plan's steps: server-side apply, kind group by kind group (each group concurrently),
// with Namespaces and CRDs established and every wave healthy before the next one starts.
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import { isTransient, KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { sleep } from "../util/sleep.ts";
import { ignoredValuesFromLive } from "./diff/index.ts";
import { assessHealth } from "./health/index.ts";
import type { ApplyTask, Plan } from "./plan.ts";
import { errorMessage, resourceOf, skipAll } from "./resource-results.ts";
import type { ResourceResult, SyncResult } from "./result.ts";
import type { SyncRequest, SyncTarget } from "./types.ts";
import { waitHealthy } from "./wait.ts";

/** An object the assessment already found forbidden: failed like a refused apply, without asking again. */
class ForbiddenObject extends Error {}

export async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  if (await client.get("v1", "Namespace", undefined, name)) return;
  try {
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

/** Validate=true (the default) makes unknown or duplicate fields an error, as kubectl --validate=strict does. */
export function validationFor(env: EnvironmentConfig): "Strict" | "Ignore" {
  return env.syncPolicy.syncOptions.Validate ? "Strict" : "Ignore";
}

export async function applyOne(
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

/** Argo CD's SyncFail hooks: applied, best effort, when a sync fails (a notification Job, a rollback). */
export async function runSyncFailHooks(
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
export async function applySteps(
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
    // Objects of a step do not depend on each other (Namespaces and CRDs have steps of their own),
    // so they go concurrently, started in kind order, like the tasks of one Argo CD wave.
    if (step.foundational) client.forgetDiscovery();
    await mapLimit(step.tasks, request.concurrency ?? 16, async (task) => {
      const name = kubectlName(keyOf(task.obj));
      try {
        if (task.denied) throw new ForbiddenObject(task.denied);
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
