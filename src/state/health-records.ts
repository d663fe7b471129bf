// When an environment has been Healthy at which commit, without a break: the evidence a promotion
// reads (src/reconciler/promotion). Kept by the state store on every write of the state, from
// what the write changed (the recorded health, the synced revision, the newest history entry), so
// no writer of the state has to remember it, whichever replica it runs on.
import type { EnvironmentState } from "./types.ts";

/** One stretch of time the environment was synced at `revision` and Healthy, without a break. */
export interface HealthRecord {
  revision: string;
  /** When it began (the write that recorded the commit synced and Healthy), ISO time. */
  since: string;
  /** When it ended, ISO time; absent while it lasts. */
  until?: string;
  /**
   * Why it ended: "moved" (the environment took another commit, or wrote part of one), else the
   * health it turned to (Degraded, Progressing, Unknown...).
   */
  ended?: string;
}

/** Records kept per environment: the newest ones, enough for a downstream to find a proven commit. */
export const HEALTH_RECORDS_KEPT = 10;

type Seen = Pick<EnvironmentState, "health" | "lastSyncedRevision" | "history">;

/**
 * The commit the state says is synced and Healthy now, or undefined. The newest history entry of
 * another commit that wrote something (a failed sync, which leaves lastSyncedRevision where it
 * was) means the cluster no longer runs that commit alone.
 */
export function healthyAt(s: Seen): string | undefined {
  if (s.health !== "Healthy" || !s.lastSyncedRevision) return undefined;
  const last = s.history.at(-1);
  if (last && last.revision !== s.lastSyncedRevision && last.result !== "Refused") {
    const { created, configured, pruned } = last.counts;
    if (created + configured + pruned > 0) return undefined;
  }
  return s.lastSyncedRevision;
}

/** The records after a write that left the state as `after`, at `now`. Pure. */
export function nextHealthRecords(records: readonly HealthRecord[], after: Seen, now: Date): HealthRecord[] {
  const open = records.at(-1)?.until === undefined ? records.at(-1) : undefined;
  const current = healthyAt(after);
  // Unchanged; a state from before records were kept starts its first one now (never earlier).
  if (open?.revision === current) return [...records];
  const at = now.toISOString();
  const kept = [...records];
  if (open) {
    const ended =
      after.lastSyncedRevision !== open.revision || after.health === "Healthy" ? "moved" : after.health;
    kept[kept.length - 1] = { ...open, until: at, ended: ended ?? "Unknown" };
  }
  if (current) kept.push({ revision: current, since: at });
  return kept.slice(-HEALTH_RECORDS_KEPT);
}
