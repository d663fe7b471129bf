// Step 1 of a release: which revision this attempt syncs. Today that is the revision the operation
// was started for (the branch head, or the one a person named), which a retry keeps (Argo CD);
// with retry.refresh a retry moves to the branch's newest revision, only if that passes every gate
// a new revision must pass (a gated environment's retry never moves: what was approved is what it
// retries). A rollback's pin (trackedRevision) and then a promotion (revisionToTake) decide here,
// before anything is rendered or asked: a pin holds promotions too.

import type { PinRecord } from "../../state/types.ts";
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

export async function chooseRevision(r: Release, n: number): Promise<{ revision: string; moves: boolean }> {
  const env = r.env;
  const newest =
    revisionSourceOf(n, r.opts.pinned, env.syncPolicy.retry.refresh) === "operation"
      ? r.head
      : r.state.pin
        ? trackedRevision(r.head, r.state.pin)
        : ((
            await revisionToTake(
              r.fx.promotion,
              await r.fx.o.source.head(env.source.branch),
              r.state.lastSyncedRevision,
            )
          ).revision ?? r.head);
  const allowed =
    newest !== r.head && (await ask(r, "refresh", newest, { manual: false, prune: r.opts.prune })).allowed;
  return chosenRevision(r.head, newest, allowed);
}
