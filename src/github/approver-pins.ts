// Listed approvers' logins pinned to GitHub ids, per repository (see authorize.ts for why). The
// pins live in the state of each environment of the repository; all of them are read, so a
// renamed or new environment is bound by the pins its predecessors made, and a pin is written to
// and dropped from all of them. A config push that lists approvers pins them at once, not at
// their first approval: the login is bound to the account that had it when the config named it.

import { isInstanceOf } from "../state/identity.ts";
import type { EnvironmentState } from "../state/types.ts";
import type { ApproverPins } from "./authorize.ts";
import { accountIdOf, isCollaborator } from "./authorize.ts";
import type { Octokit } from "./octokit.ts";
import type { RepoRuntime } from "./runtime.ts";

/**
 * Whether a state is one of `app`'s environments: named `<app>.<env>` (state/identity.ts), where
 * an environment name holds no dot, so another app's state never matches.
 */
export function ofApp(app: string): (s: Pick<EnvironmentState, "environment">) => boolean {
  return (s) => isInstanceOf(app, s.environment);
}

/**
 * The listed approvers' pinned ids, per repository: the pins kept in every environment state of
 * the repository (a renamed or new environment has none of its own), this environment's first.
 * Read only when a listed user is concerned (a refusal of anyone else reads no state); a new pin
 * is written to this environment's state and to those of the repository's other environments.
 */
export function approverPins(rt: RepoRuntime, instance: string): ApproverPins {
  let pinned: Promise<Map<string, number>> | undefined;
  const store = rt.reconciler.store;
  const mine = ofApp(rt.reconciler.app);
  const all = () => {
    pinned ??= store.list().then((states) => {
      const own = states.find((s) => s.environment === instance);
      const pins = new Map(Object.entries(own?.approverIds ?? {}));
      for (const s of states.filter(mine))
        for (const [login, id] of Object.entries(s.approverIds ?? {}))
          if (!pins.has(login)) pins.set(login, id);
      return pins;
    });
    return pinned;
  };
  return {
    all,
    pin: async (login, id) => {
      const key = login.toLowerCase();
      const stored = await store.update(instance, (s) => {
        s.approverIds ??= {};
        s.approverIds[key] ??= id;
      });
      // Another replica may have pinned it first: the stored pin wins.
      const kept = stored.approverIds?.[key] ?? id;
      for (const other of rt.reconciler.environments.filter((c) => c.instance !== instance))
        await store.update(other.instance, (s) => {
          s.approverIds ??= {};
          s.approverIds[key] ??= kept;
        });
      (await all()).set(key, kept);
      return kept;
    },
  };
}

/**
 * Drops the pin of every login no environment of the repository lists any more, from each state
 * of the repository that holds it (all of them are read, so one copy left would bind the login
 * still). Listed means by the config in force or by the rules any environment was deployed under:
 * a merged but undeployed config clears no pin. Listing the login again binds whoever has it then.
 */
export async function dropUnlistedPins(rt: RepoRuntime): Promise<void> {
  const store = rt.reconciler.store;
  const states = (await store.list()).filter(ofApp(rt.reconciler.app));
  const keep = new Set(
    [
      ...rt.config.environments.flatMap((e) => e.approval?.users ?? []),
      ...states.flatMap((s) => s.deployedRules?.approval?.users ?? []),
    ].map((u) => u.toLowerCase()),
  );
  const unlisted = (s: EnvironmentState) =>
    Object.keys(s.approverIds ?? {}).filter((login) => !keep.has(login));
  for (const s of states.filter((s) => unlisted(s).length > 0))
    await store.update(s.environment, (fresh) => {
      for (const login of unlisted(fresh)) delete fresh.approverIds?.[login];
    });
}

/**
 * Pins every login the config lists that is not pinned yet, to the account that has it now, if
 * that account is a collaborator. Returns the logins it could not pin (no account, or no
 * collaborator): they approve nothing, and the config check names them.
 */
export async function pinListedApprovers(gh: Octokit, rt: RepoRuntime): Promise<string[]> {
  const first = rt.reconciler.environments[0];
  const listed = [...new Set(rt.config.environments.flatMap((e) => e.approval?.users ?? []))];
  if (!first || listed.length === 0) return [];
  const pins = approverPins(rt, first.instance);
  const known = await pins.all();
  const unpinned: string[] = [];
  for (const login of listed) {
    if (known.has(login.toLowerCase())) continue;
    const id = await accountIdOf(gh, login);
    if (id === undefined || !(await isCollaborator(gh, rt.ref, login))) unpinned.push(login);
    else await pins.pin(login, id);
  }
  return unpinned;
}
