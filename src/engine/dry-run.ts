// Every write of a sync is tried first as a server-side dry run, all of them before the first real
// write (as Argo CD does): a typo in wave 2 then fails the sync with nothing of waves 0 and 1 written.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { validationFor } from "./apply.ts";
import type { HookTask } from "./hooks/plan.ts";
import type { ApplyTask } from "./plan.ts";
import { errorMessage } from "./resource-results.ts";
import { mayRecreate, resourceOptionsOf } from "./sync-options.ts";
import type { SyncRequest, SyncTarget } from "./types.ts";

export interface DryRunFailure {
  obj: KubeObject;
  message: string;
}

/**
 * What cannot be dry-run because the sync itself creates what it needs first: objects in a
 * namespace this sync creates, and custom resources whose kind is not served yet (a CRD in the same
 * render, or one an operator installs: SkipDryRunOnMissingResource).
 */
async function skipped(client: KubeClient, obj: KubeObject, creating: Set<string>): Promise<boolean> {
  if (obj.metadata.namespace && creating.has(obj.metadata.namespace)) return true;
  return (await client.resourceFor(obj.apiVersion, obj.kind)) === undefined;
}

/** A hook is created, never patched: dry-run it under a name of its own so no earlier run is touched. */
function asNewObject(hook: HookTask): KubeObject {
  return { ...hook.obj, metadata: { ...hook.obj.metadata, name: `dry-run-${hook.id.slice(0, 12)}` } };
}

export async function dryRunAll(
  client: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
  tasks: ApplyTask[],
  hooks: HookTask[],
): Promise<DryRunFailure[]> {
  const creating = new Set(
    tasks.filter((t) => t.obj.kind === "Namespace" && t.action === "create").map((t) => t.obj.metadata.name),
  );
  // CreateNamespace=true creates the destination only when it is missing: an existing one is dry-run
  // like any other, or a bad object in a later wave would fail only after earlier waves were written.
  const destination = target.env.destination.namespace;
  if (
    target.env.syncPolicy.syncOptions.CreateNamespace &&
    !creating.has(destination) &&
    (await client.get("v1", "Namespace", undefined, destination)) === undefined
  )
    creating.add(destination);
  const failures: DryRunFailure[] = [];
  const trial = async (obj: KubeObject, tolerateImmutable: boolean) => {
    if (await skipped(client, obj, creating)) return;
    try {
      await client.dryRunApply(obj, validationFor(target.env, obj));
    } catch (err) {
      // The real write deletes and recreates it (Force=true, --force): the dry run cannot try that.
      if (tolerateImmutable && err instanceof KubeApiError && err.immutableField) return;
      failures.push({ obj, message: errorMessage(err) });
    }
  };
  const unique = new Map(hooks.map((h) => [h.id, h]));
  await mapLimit(
    [
      ...tasks
        // Replace=true writes with PUT, which has no apply-shaped dry run here; denied ones fail anyway;
        // a drift confirmed by a dry run of the same body and validation a moment ago passed it already.
        .filter(
          (t) =>
            !t.denied &&
            !(resourceOptionsOf(t.obj).replace ?? target.env.syncPolicy.syncOptions.Replace) &&
            t.dryRunPassed !== validationFor(target.env, t.obj),
        )
        .map(
          (t) => () =>
            trial(
              t.obj,
              (request.force === true || resourceOptionsOf(t.obj).force === true) && mayRecreate(t.obj.kind),
            ),
        ),
      ...[...unique.values()].map((h) => () => trial(asNewObject(h), false)),
    ],
    request.concurrency ?? 16,
    (run) => run(),
  );
  return failures.sort((a, b) => keyString(keyOf(a.obj)).localeCompare(keyString(keyOf(b.obj))));
}
