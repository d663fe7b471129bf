// Running hooks: each run creates the hook anew (after deleting the one of the previous run, by
// default), waits until it has finished, and applies its deletion policies. A hook is an operation,
// not managed state: it carries no tracking annotation, so it is never compared, healed or pruned.
import { formatDuration } from "../../config/duration.ts";
import type { KubeClient } from "../../kube/client.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { type KubeObject, keyOf } from "../../kube/object.ts";
import { mapLimit } from "../../util/map-limit.ts";
import { sleep } from "../../util/sleep.ts";
import { assessHealth, type HealthChecks } from "../health/index.ts";
import { errorMessage, resourceOf } from "../resource-results.ts";
import type { HookOutcome, ResourceResult } from "../result.ts";
import type { SyncRequest, SyncTarget } from "../types.ts";
import { isHookObject } from "./annotations.ts";
import { HOOK_ID_LABEL, HOOK_OF_LABEL, type HookTask } from "./plan.ts";

/**
 * Held on a hook until its outcome is read (as Argo CD does with its hook finalizer): a Job that
 * ttlSecondsAfterFinished deletes the moment it finishes is still there to say how it ended.
 */
export const HOOK_FINALIZER = "syncward.dev/hook-finalizer";

const DEFAULT_TIMEOUT_MS = 300_000;
const GONE_TIMEOUT_MS = 120_000;

export interface HookRun {
  task: HookTask;
  /** The name it ran under (a generateName hook's is the server's). */
  name: string;
  outcome: HookOutcome;
  message: string;
  /** Deleted after it finished, by this deletion policy. */
  deletedBy?: string;
}

type Waiting = Pick<SyncRequest, "healthTimeoutMs" | "signal" | "onProgress">;

function labelled(task: HookTask, instance: string): KubeObject {
  return {
    ...task.obj,
    metadata: {
      ...task.obj.metadata,
      labels: { ...task.obj.metadata.labels, [HOOK_OF_LABEL]: instance, [HOOK_ID_LABEL]: task.id },
      finalizers: [...((task.obj.metadata.finalizers as string[] | undefined) ?? []), HOOK_FINALIZER],
    },
  };
}

function refOf(obj: KubeObject, name: string) {
  return { ...keyOf({ ...obj, metadata: { ...obj.metadata, name } }), apiVersion: obj.apiVersion };
}

/** Earlier runs of this hook: every object labelled with its id, and the named object if it exists. */
async function earlierRuns(client: KubeClient, task: HookTask, instance: string): Promise<string[]> {
  const { apiVersion, kind } = task.obj;
  const ns = task.obj.metadata.namespace;
  const { items } = await client.list(apiVersion, kind, {
    namespace: ns,
    labelSelector: `${HOOK_OF_LABEL}=${instance},${HOOK_ID_LABEL}=${task.id}`,
  });
  const names = new Set(items.map((o) => o.metadata.name));
  const own = task.obj.metadata.name;
  // By name only what is itself a hook (an older run, one applied before hooks were operations):
  // never an object of that name that something else manages.
  const named = own && !names.has(own) ? await client.get(apiVersion, kind, ns, own) : undefined;
  if (own && named && isHookObject(named)) names.add(own);
  return [...names];
}

/** Lets a hook go: its outcome has been read (or it is an earlier run, about to be deleted). */
async function release(client: KubeClient, obj: KubeObject, name: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const live = await client.get(obj.apiVersion, obj.kind, obj.metadata.namespace, name);
    const finalizers = (live?.metadata.finalizers as string[] | undefined) ?? [];
    if (!live || !finalizers.includes(HOOK_FINALIZER)) return;
    try {
      await client.replace({
        ...live,
        metadata: { ...live.metadata, finalizers: finalizers.filter((f) => f !== HOOK_FINALIZER) },
      });
      return;
    } catch (err) {
      // Its controller wrote status meanwhile: read it again.
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
    }
  }
  throw new Error(`could not remove ${HOOK_FINALIZER} from ${name}: it kept changing`);
}

async function deleteAndWait(client: KubeClient, obj: KubeObject, names: string[], signal?: AbortSignal) {
  // A run whose syncward stopped before reading it still holds the finalizer.
  await Promise.all(names.map((n) => release(client, obj, n)));
  await Promise.all(names.map((n) => client.delete(refOf(obj, n), "background")));
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  for (const n of names) {
    while (await client.get(obj.apiVersion, obj.kind, obj.metadata.namespace, n)) {
      if (Date.now() > deadline)
        throw new Error(`the previous run ${n} was deleted (BeforeHookCreation) but is still there`);
      await sleep(250, signal);
    }
  }
}

async function create(client: KubeClient, obj: KubeObject): Promise<KubeObject> {
  if (!obj.metadata.name) return client.create(obj);
  try {
    return await client.create(obj);
  } catch (err) {
    // Still there without BeforeHookCreation: applied, as Argo CD does, and awaited as it is.
    if (err instanceof KubeApiError && err.status === 409) return client.apply(obj);
    throw err;
  }
}

/** Until the hook is Healthy (succeeded) or Degraded (failed); kinds without health finish at once. */
async function finished(
  client: KubeClient,
  created: KubeObject,
  request: Waiting,
  checks: HealthChecks | undefined,
): Promise<{ outcome: HookOutcome; message: string }> {
  const timeoutMs = request.healthTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const { apiVersion, kind } = created;
  const { namespace, name } = created.metadata;
  for (;;) {
    const live = await client.get(apiVersion, kind, namespace, name);
    if (!live) return { outcome: "Failed", message: "deleted before it finished" };
    // A hook being deleted (its ttlSecondsAfterFinished ran out) is held by syncward's finalizer
    // precisely so its outcome can be read: judge its status, not its pending deletion.
    const { deletionTimestamp: _deleting, ...metadata } = live.metadata;
    const health = assessHealth({ ...live, metadata }, checks);
    if (!health || health.status === "Healthy") return { outcome: "Succeeded", message: "succeeded" };
    if (health.status === "Degraded")
      return { outcome: "Failed", message: `failed${health.message ? `: ${health.message}` : ""}` };
    if (Date.now() > deadline)
      return {
        outcome: "Failed",
        message: `did not finish within ${formatDuration(timeoutMs)} (syncPolicy.healthTimeout): ${health.status}${health.message ? `: ${health.message}` : ""}`,
      };
    if (request.signal?.aborted) return { outcome: "Failed", message: "stopped while waiting for it" };
    await sleep(500, request.signal);
  }
}

export async function runHook(
  client: KubeClient,
  target: SyncTarget,
  task: HookTask,
  request: Waiting,
): Promise<HookRun> {
  const obj = labelled(task, target.instance);
  let name = obj.metadata.name || `${obj.metadata.generateName ?? ""}*`;
  let created: KubeObject | undefined;
  try {
    if (task.policies.includes("BeforeHookCreation")) {
      const earlier = await earlierRuns(client, task, target.instance);
      if (earlier.length > 0) await deleteAndWait(client, obj, earlier, request.signal);
    }
    created = await create(client, obj);
    name = created.metadata.name;
    const { outcome, message } = await finished(client, created, request, target.health);
    await release(client, obj, name);
    const policy = outcome === "Succeeded" ? "HookSucceeded" : "HookFailed";
    let deletedBy: string | undefined;
    if (task.policies.includes(policy)) {
      await client.delete(refOf(obj, name), "background");
      deletedBy = policy;
    }
    return { task, name, outcome, message, deletedBy };
  } catch (err) {
    // Never leave a finalizer behind on a hook whose run broke off: nobody would remove it.
    if (created) await release(client, obj, name).catch(() => undefined);
    return { task, name, outcome: "Failed", message: `failed: ${errorMessage(err)}` };
  }
}

/** Runs hooks concurrently (the hooks of one wave), reporting each in `resources`. */
export async function runHooks(
  client: KubeClient,
  target: SyncTarget,
  tasks: HookTask[],
  request: Waiting & Pick<SyncRequest, "concurrency">,
  resources: ResourceResult[],
): Promise<HookRun[]> {
  const runs = await mapLimit(tasks, request.concurrency ?? 16, async (task) => {
    const run = await runHook(client, target, task, request);
    request.onProgress?.({ type: "hook", phase: task.phase, name: run.name, outcome: run.outcome });
    return run;
  });
  // Reported in the order they were planned, whichever finished first.
  for (const run of runs) resources.push(hookResult(run));
  return runs;
}

export function hookResult(run: HookRun): ResourceResult {
  const { task } = run;
  const shown = task.display.replace(/[^/]*$/, run.name);
  const deleted = run.deletedBy ? ` (deleted: ${run.deletedBy})` : "";
  return resourceOf(
    { ...task.obj, metadata: { ...task.obj.metadata, name: run.name } },
    {
      status: run.outcome === "Succeeded" ? "Synced" : "Failed",
      action: run.outcome === "Succeeded" ? "created" : "failed",
      wave: task.wave,
      hook: {
        phase: task.phase,
        outcome: run.outcome,
        ...(run.deletedBy ? { deletedBy: run.deletedBy } : {}),
      },
      message: `${shown} ${task.phase} hook ${run.message}${deleted}`,
    },
  );
}

/** Hooks of an operation that did not run them (a dry run, a self-heal), listed as such. */
export function hookNotRun(task: HookTask, why: string): ResourceResult {
  return resourceOf(
    {
      ...task.obj,
      metadata: {
        ...task.obj.metadata,
        name: task.obj.metadata.name || `${task.obj.metadata.generateName ?? ""}*`,
      },
    },
    {
      status: "Skipped",
      action: "skipped",
      wave: task.wave,
      hook: { phase: task.phase, outcome: "Skipped" },
      message: `${task.display} ${task.phase} hook ${why}`,
    },
  );
}
