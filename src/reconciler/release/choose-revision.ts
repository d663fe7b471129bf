// Step 1 of a release: which revision it syncs. What the environment takes from its branch
// (revisionFromBranch: a rollback's pin, then a promotion, then the branch head) is decided here
// for the pass that starts a release, a request that names no revision, and a retry with
// retry.refresh alike, before anything is rendered or asked: a pin holds promotions too. A
// release keeps the revision it was started for (the one taken, or the one a person named), as a
// retry does (Argo CD); with retry.refresh a retry moves to what the branch gives now, only if
// that passes every gate a new revision must pass (a gated environment's retry never moves: what
// was approved is what it retries).

import type { EnvironmentState, PinRecord } from "../../state/types.ts";
import type { Promotion, Target } from "../promotion/promotion.ts";
import { ask } from "./ask-gate.ts";
import type { Release } from "./release.ts";

/** Where attempt `n` looks for its revision: the operation's own, or the branch's newest. */
export type RevisionChoice = "operation" | "branch";

/** `pinned`: a person named the revision. The first attempt always takes the operation's. */
export function revisionSourceOf(
  n: number,
  pinned: boolean | undefined,
  refresh: boolean | undefined,
): RevisionChoice {
  return n === 1 || pinned || !refresh ? "operation" : "branch";
}

/** The revision an attempt syncs: the newest one only where it differs and the gate let it through. */
export function chosenRevision(
  head: string,
  newest: string,
  allowed: boolean,
): { revision: string; moves: boolean } {
  const moves = newest !== head && allowed;
  return { revision: moves ? newest : head, moves };
}

/**
 * The commit an environment takes from its branch's head: with `promotion`, the newest one its
 * upstreams have proven (none: it holds where it is); otherwise the head itself.
 */
export async function revisionToTake(
  promotion: Promotion | undefined,
  head: string,
  current?: string,
): Promise<Target> {
  return promotion ? promotion.target(head, current) : { revision: head };
}

/**
 * The revision automated syncs follow: the branch head, unless a rollback pinned the environment,
 * in which case the pinned revision (until `app unpin`), whatever the branch did meanwhile.
 */
export function trackedRevision(branchHead: string, pin: Pick<PinRecord, "revision"> | undefined): string {
  return pin?.revision ?? branchHead;
}

/**
 * What the environment takes from its branch now: the pinned revision while a rollback pins it
 * (the branch is not read); else revisionToTake (a promotion's newest proven commit, or none:
 * `waiting` says why; without one, the head).
 */
export async function revisionFromBranch(
  promotion: Promotion | undefined,
  head: () => Promise<string>,
  state: Pick<EnvironmentState, "pin" | "lastSyncedRevision">,
): Promise<Target> {
  if (state.pin) return { revision: state.pin.revision };
  return revisionToTake(promotion, await head(), state.lastSyncedRevision);
}

export async function chooseRevision(r: Release, n: number): Promise<{ revision: string; moves: boolean }> {
  const env = r.env;
  const newest =
    revisionSourceOf(n, r.opts.pinned, env.syncPolicy.retry.refresh) === "operation"
      ? r.head
      : ((await revisionFromBranch(r.fx.promotion, () => r.fx.o.source.head(env.source.branch), r.state))
          .revision ?? r.head);
  const allowed =
    newest !== r.head && (await ask(r, "refresh", newest, { manual: false, prune: r.opts.prune })).allowed;
  return chosenRevision(r.head, newest, allowed);
}
