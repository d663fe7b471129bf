// Since when an environment's newest release has been bad without a break: the clock of an
// automatic rollback (reconciler/auto-rollback.ts). Kept by the state store on every write, from
// what the write left (the recorded health, the synced revision, the newest history entry), like
// the health records, so no writer of the state has to remember it, whichever replica it runs on.
import type { DegradedStretch, EnvironmentState, Trigger } from "./types.ts";

type Seen = Pick<EnvironmentState, "health" | "lastSyncedRevision" | "history">;

/** Operations that are not a release of their own: a heal re-applies, the others go back. */
const NOT_A_RELEASE: ReadonlySet<Trigger> = new Set(["selfHeal", "rollback", "autoRollback", "unpin"]);

/**
 * The release that is bad now and how, or undefined. A failed sync of a new commit is bad whatever
 * the health reads (what it wrote may be half of it); otherwise the synced commit is bad while
 * the environment reads Degraded.
 */
export function badRelease(s: Seen): { revision: string; why: string } | undefined {
  const last = s.history.findLast((h) => !NOT_A_RELEASE.has(h.trigger) && h.result !== "Refused");
  if (last && (last.result === "Failed" || last.result === "Error") && last.revision !== s.lastSyncedRevision)
    return { revision: last.revision, why: "sync failed" };
  if (s.health === "Degraded" && s.lastSyncedRevision)
    return { revision: s.lastSyncedRevision, why: "Degraded" };
  return undefined;
}

/** The stretch after a write that left the state as `after`, at `now`. Pure. */
export function nextDegradedStretch(
  before: DegradedStretch | undefined,
  after: Seen,
  now: Date,
): DegradedStretch | undefined {
  const bad = badRelease(after);
  if (!bad) return undefined;
  // The same release bad in another way (its failed sync retried into a Degraded one) goes on.
  if (before?.revision === bad.revision) return before.why === bad.why ? before : { ...before, why: bad.why };
  return { revision: bad.revision, since: now.toISOString(), why: bad.why };
}
