// A repository renamed or transferred keeps everything it had: each environment's state (freeze,
// pending approvals, history, prune inventory) is copied to the new instance name, and every
// object the old instance manages is re-labelled for the new one in place. Nothing is applied,
// pruned, deleted or recreated; the new name's first sync finds everything in sync.
import type { SyncwardConfig } from "../config/types.ts";
import { retrack } from "../engine/retrack.ts";
import type { KubeClient } from "../kube/client.ts";
import type { StateStore } from "../state/store.ts";
import { instanceName } from "./environment-controller.ts";
import { type ClusterResolver, writerFor } from "./reconciler.ts";

export interface RenamedEnvironment {
  env: string;
  from: string;
  to: string;
  objects: number;
}

export async function renameApp(o: {
  client: KubeClient;
  /** Each environment's objects are relabelled on its own destination cluster. */
  clusters?: ClusterResolver;
  store: StateStore;
  config: SyncwardConfig;
  from: string;
  to: string;
}): Promise<RenamedEnvironment[]> {
  const renamed: RenamedEnvironment[] = [];
  for (const env of o.config.environments) {
    const from = instanceName(o.from, env.name);
    const to = instanceName(o.to, env.name);
    if (from === to) continue;
    const state = await o.store.load(from);
    // Objects first: should this stop half-way, the old name still holds the state and runs again.
    const objects = await retrack(
      writerFor(o.clusters ? o.clusters.clientFor(env.destination) : o.client, env),
      from,
      to,
      env.policy.namespaces,
      state.inventory ?? [],
    );
    await o.store.copy(from, to);
    renamed.push({ env: env.name, from, to, objects });
  }
  return renamed;
}
