// Moving an app's state from the names syncward used before identities (`<owner>-<repo>.<env>`,
// cut at 63 characters: two repositories could share one) to its identity's (state/identity.ts).
// Per environment, once: the objects the old instance manages get the new tracking id and label in
// place (nothing applied, pruned, deleted or recreated; the applied hash is kept, so the first
// sync finds them in sync), then the state (history, approvals, freeze, pins, inventory) is
// written under the new name, and only then is the old state retired. Should it stop half-way,
// the old state still stands and the next start does it again (both steps repeat harmlessly).
//
// An old state is moved only to the app that claimed it: a repository's state carries the
// repository that first wrote it, so of two repositories that shared an old name, only the
// claimant takes it (and the other starts afresh). The CLI takes only unclaimed states, never an
// installed repository's.
import type { EnvironmentConfig, SyncwardConfig } from "../config/types.ts";
import { retrack } from "../engine/retrack.ts";
import type { KubeClient } from "../kube/client.ts";
import { instanceName, legacyInstanceName } from "../state/identity.ts";
import type { StateStore } from "../state/store.ts";
import type { Logger } from "./environment-controller.ts";

/** The app's name before identities, and the repository a state must have been claimed by. */
export interface LegacyName {
  app: string;
  /** `owner/repo` for a GitHub repository; absent (the CLI): only unclaimed states are taken. */
  repository?: string;
}

export interface MovedEnvironment {
  env: string;
  from: string;
  to: string;
  objects: number;
}

/** Whether an old state claimed by `claim` is `legacy`'s to take. */
export function mayTake(claim: string | undefined, legacy: LegacyName): boolean {
  if (claim === undefined) return true;
  return legacy.repository !== undefined && claim.toLowerCase() === legacy.repository.toLowerCase();
}

export async function upgradeIdentity(o: {
  /** The client an environment's objects are written with (its project's ServiceAccount). */
  writer: (env: EnvironmentConfig) => KubeClient;
  store: StateStore;
  config: SyncwardConfig;
  app: string;
  legacy: LegacyName;
  log: Logger;
}): Promise<MovedEnvironment[]> {
  const moved: MovedEnvironment[] = [];
  for (const env of o.config.environments) {
    const from = legacyInstanceName(o.legacy.app, env.name);
    const to = instanceName(o.app, env.name);
    if (from === to) continue;
    const old = await o.store.stored(from);
    if (!old || old.movedTo) continue;
    if (!mayTake(old.state.repository, o.legacy)) {
      o.log.warn(
        { env: env.name, from, claimedBy: old.state.repository },
        "a state under this app's old name belongs to another repository: left to it",
      );
      continue;
    }
    // Objects first: should this stop half-way, the old name still holds the state and runs again.
    const objects = await retrack(o.writer(env), from, to, env.policy.namespaces, old.state.inventory ?? []);
    const { repository: _claim, repositoryEvent: _event, ...state } = old.state;
    await o.store.update(to, () => ({ ...state, environment: to }));
    await o.store.retire(from, to);
    o.log.info({ env: env.name, from, to, objects }, "state and objects moved to the app's identity");
    moved.push({ env: env.name, from, to, objects });
  }
  return moved;
}
