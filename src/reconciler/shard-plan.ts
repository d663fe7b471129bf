// Which apps this replica should take and which it should hand back, from what every replica can
// read in the API server: the live members (one membership Lease each) and each app's Lease.
// Pure, so that the balance rules are table-tested; shard.ts carries out the plan, and the app
// Leases stay the truth (a plan only says which leases to try for or to release).
//
// The rules:
// - the fair share is ceil(apps / live members); a replica takes free apps only while it holds
//   fewer than its share, and hands back the surplus when it holds more (after a join);
// - free means no holder, or a holder whose lease has expired; an app held by a replica that is
//   not (or not yet) a member counts as held: the lease decides, not the membership;
// - which apps: rendezvous hashing of app x replica gives every app a preference order over the
//   members, the same on every replica. A replica takes first the free apps it ranks highest on,
//   and releases first the apps some other member ranks higher on, so who holds what moves as
//   little as possible when members come and go.
import { createHash } from "node:crypto";

export interface ShardApp {
  app: string;
  /** The identity holding the app's Lease, when someone holds it and the lease has not expired. */
  holder?: string;
}

export interface ShardView {
  self: string;
  /** Identities of the live members (this replica counts even when its own record is missing). */
  members: string[];
  apps: ShardApp[];
}

export interface ShardPlan {
  /** ceil(apps / members): what each member should hold at most. */
  share: number;
  /** Free apps to try to take, best first. */
  take: string[];
  /** Apps held here to hand back, first the ones others are preferred for. */
  release: string[];
}

/** Rendezvous score of `member` for `app`: higher is preferred; the same on every replica. */
export function score(app: string, member: string): bigint {
  return createHash("sha256").update(`${app}\u0000${member}`).digest().readBigUInt64BE(0);
}

/** The member rendezvous hashing prefers for `app`. */
export function preferred(app: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const m of members) {
    const s = score(app, m);
    if (s > bestScore || (s === bestScore && best !== undefined && m < best)) {
      best = m;
      bestScore = s;
    }
  }
  return best;
}

export function fairShare(apps: number, members: number): number {
  return apps === 0 ? 0 : Math.ceil(apps / Math.max(1, members));
}

export function planShard(view: ShardView): ShardPlan {
  const members = [...new Set([...view.members, view.self])].sort();
  const share = fairShare(view.apps.length, members.length);
  const mine = view.apps.filter((a) => a.holder === view.self).map((a) => a.app);
  // Apps another member is preferred for go first; among them, those we score lowest on.
  const byKeep = (app: string) => (preferred(app, members) === view.self ? 1 : 0);
  const release =
    mine.length > share
      ? [...mine]
          .sort((a, b) => byKeep(a) - byKeep(b) || compare(score(a, view.self), score(b, view.self)))
          .slice(0, mine.length - share)
      : [];
  const free = view.apps.filter((a) => a.holder === undefined).map((a) => a.app);
  const take =
    mine.length < share
      ? free
          .sort((a, b) => byKeep(b) - byKeep(a) || compare(score(b, view.self), score(a, view.self)))
          .slice(0, share - mine.length)
      : [];
  return { share, take, release };
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
