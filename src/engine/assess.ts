// Everything short of writing: prepare the objects, read live, compare, plan, and confirm
// suspected drift. What a diff, a preview, a dry run and every sync start from.
import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import type { KubeObject } from "../kube/object.ts";
import { validationFor } from "./apply.ts";
import { confirmDrift } from "./confirm-drift.ts";
import { compareObjects } from "./diff/index.ts";
import { fetchLive } from "./live.ts";
import { type Plan, planSync } from "./plan.ts";
import { type PreparedObject, prepareObjects } from "./prepare.ts";
import { withTracking } from "./tracking.ts";
import type { SyncRequest, SyncTarget } from "./types.ts";

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

export interface Assessment {
  prepared: PreparedObject[];
  tracked: KubeObject[];
  live: Map<string, KubeObject>;
  plan: Plan;
  /** Objects syncward may not read (see LiveState.denied): planned, but failed without a request. */
  denied: Map<string, string>;
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
  const { live, denied } = await fetchLive(
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
  return { prepared, tracked, live, plan, denied };
}
