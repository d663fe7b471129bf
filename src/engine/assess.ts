// Everything short of writing: prepare the objects, read live, compare, plan, and confirm
// suspected drift. What a diff, a preview, a dry run and every sync start from.
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import type { KubeObject } from "../kube/object.ts";
import { validationFor } from "./apply.ts";
import { confirmDrift } from "./confirm-drift.ts";
import { compareObjects } from "./diff/index.ts";
import { PHASE_ORDER } from "./hooks/annotations.ts";
import { generateNameProblem, type HookTask, type SkippedObject, splitHooks } from "./hooks/plan.ts";
import { fetchEach, fetchLive } from "./live.ts";
import { type Plan, planSync } from "./plan.ts";
import { type PreparedObject, prepareObjects, ValidationError } from "./prepare.ts";
import { guardWrites, reservedPlaces } from "./reserved.ts";
import { compareOptionsFor } from "./revert/index.ts";
import { withTracking } from "./tracking.ts";
import type { SyncRequest, SyncTarget } from "./types.ts";

export function comparerFor(env: EnvironmentConfig) {
  return (desired: KubeObject, live: KubeObject) => {
    const c = compareObjects(desired, live, compareOptionsFor(env));
    return {
      inSync: c.inSync,
      paths: c.differences.map((d) => d.path),
      // A dry-run apply keeps what another manager added: it cannot clear such drift.
      extraItems: c.differences.some((d) => d.kind === "extra" || d.kind === "added"),
    };
  };
}

export interface Assessment {
  prepared: PreparedObject[];
  tracked: KubeObject[];
  live: Map<string, KubeObject>;
  plan: Plan;
  /** Objects syncward may not read (see LiveState.denied): planned, but failed without a request. */
  denied: Map<string, string>;
  /** Hooks of the render (namespace defaulted), one per phase they name: run by a sync, never planned. */
  hooks: HookTask[];
  /** Never applied: `hook: Skip`, Helm test hooks, phases syncward does not run. */
  skipped: SkippedObject[];
}

/** A generateName hook goes through preparation under its prefix, and leaves it without a name. */
function named(obj: KubeObject): KubeObject {
  return obj.metadata.name
    ? obj
    : { ...obj, metadata: { ...obj.metadata, name: String(obj.metadata.generateName ?? "") } };
}

/** Everything short of writing: what a diff, a preview or a dry run shows. */
export async function assess(
  unguarded: KubeClient,
  target: SyncTarget,
  request: SyncRequest,
): Promise<Assessment> {
  const { env } = target;
  const reserved = reservedPlaces(target.reservedNamespaces);
  // Its dry runs are writes to the API server too: through the same choke point as a sync's.
  const client = guardWrites(unguarded, reserved);
  const split = splitHooks(request.objects);
  const nameless = split.resources.flatMap((o) => {
    const problem = generateNameProblem(o);
    return problem ? [`${o.kind} ${String(o.metadata.generateName)}*: ${problem}`] : [];
  });
  if (nameless.length > 0) throw new ValidationError(nameless);
  const hookObjects = [...new Set(split.hooks.map((h) => h.obj))];
  const all = await prepareObjects(client, env, [...split.resources, ...hookObjects.map(named)], reserved);
  const prepared = all.slice(0, split.resources.length);
  const preparedHooks = new Map(
    hookObjects.map((o, i) => {
      const p = all[split.resources.length + i]!.obj;
      return [o, o.metadata.name ? p : { ...p, metadata: { ...p.metadata, name: "" } }];
    }),
  );
  const hooks = split.hooks.map((h) => ({ ...h, obj: preparedHooks.get(h.obj) ?? h.obj }));
  const tracked = prepared.map((p) => withTracking(p.obj, target.instance));
  const { live, denied } = request.readEach
    ? await fetchEach(client, prepared)
    : await fetchLive(client, target.instance, env.policy.namespaces, prepared, request.inventory ?? []);
  const opts = env.syncPolicy.syncOptions;
  const planned = planSync({
    instance: target.instance,
    desired: tracked,
    live,
    compare: comparerFor(env),
    prune: request.prune,
    allowEmpty: request.allowEmpty === true || (env.syncPolicy.automated?.allowEmpty ?? false),
    failOnSharedResource: opts.FailOnSharedResource,
    pruneLimit: env.syncPolicy.pruneLimit,
    overridePruneLimit: request.overridePruneLimit,
    confirmPrune: request.confirmPrune,
    pruneLast: opts.PruneLast,
    hooks: hooks
      .filter((h) => h.phase !== "SyncFail")
      .map((h) => ({ phase: PHASE_ORDER[h.phase], wave: h.wave, obj: h.obj })),
  });
  const confirmed = await confirmDrift(client, planned, validationFor(env));
  const plan =
    denied.size === 0
      ? confirmed
      : {
          ...confirmed,
          steps: confirmed.steps.map((s) => ({
            ...s,
            tasks: s.tasks.map((t) => (denied.has(t.key) ? { ...t, denied: denied.get(t.key) } : t)),
          })),
        };
  return { prepared, tracked, live, plan, denied, hooks, skipped: split.skipped };
}
