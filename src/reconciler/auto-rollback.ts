// Automatic rollback, the pure part: whether the environment's newest release has been bad long
// enough to go back on its own (rollback.onDegraded), to which history entry, and the evidence
// history keeps. The controller asks after every pass and at the moment the wait ends
// (auto-rollback-run.ts writes and rolls back); the state store keeps the clock
// (state/degraded-stretch.ts).
//
// It never loops: a pinned environment is never rolled back again (the pin is a rollback's, or a
// person's), each bad release is decided once (state.autoRollbacks, written before anything else),
// and it never goes back past a release that changed a CRD or ran a hook unless the rule says so.
import { formatDuration } from "../config/duration.ts";
import type { RollbackRule } from "../config/types.ts";
import type { AutoRollbackNote, EnvironmentState, HistoryEntry } from "../state/types.ts";
import { short } from "../util/short-sha.ts";

export type AutoRollbackDecision =
  | { kind: "none" }
  /** Bad, not yet for long enough: look again then. */
  | { kind: "wait"; until: Date }
  /** Bad for long enough, and not to be rolled back: said once, loudly. */
  | { kind: "refuse"; revision: string; why: string }
  | { kind: "rollback"; revision: string; to: Pick<HistoryEntry, "id" | "revision">; note: AutoRollbackNote };

export interface AutoRollbackInput {
  rule: RollbackRule | undefined;
  /** The effective policy syncs on its own (not frozen, not turned off by `app set`). */
  automated: boolean;
  state: Pick<EnvironmentState, "pin" | "degraded" | "autoRollbacks" | "history" | "healthRecords">;
  now: Date;
}

export function autoRollbackDecision(input: AutoRollbackInput): AutoRollbackDecision {
  const { rule, state } = input;
  const bad = state.degraded;
  if (!rule || !input.automated || state.pin || !bad) return { kind: "none" };
  if (state.autoRollbacks?.some((m) => m.revision === bad.revision)) return { kind: "none" };
  const due = Date.parse(bad.since) + rule.onDegraded;
  if (input.now.getTime() < due) return { kind: "wait", until: new Date(due) };
  const refuse = (why: string) => ({ kind: "refuse" as const, revision: bad.revision, why });
  // The newest stretch of Healthy at another commit: the last release that was Healthy.
  const healthy = [...(state.healthRecords ?? [])].reverse().find((r) => r.revision !== bad.revision);
  if (!healthy) return refuse("no earlier release was Healthy in what the environment's state remembers");
  const entry = state.history.findLast(
    (h) => h.revision === healthy.revision && h.result === "Succeeded" && h.trigger !== "unpin",
  );
  if (!entry)
    return refuse(
      `${short(healthy.revision)} was the last release that was Healthy, and its sync has left the history (revisionHistoryLimit)`,
    );
  const passed = state.history.filter((h) => h.id > entry.id && h.revision !== entry.revision);
  const crds = [...new Set(passed.flatMap((h) => h.crds ?? []))];
  if (crds.length > 0 && !rule.acrossCRDChanges)
    return refuse(
      `going back to ${short(entry.revision)} would pass a release that changed CustomResourceDefinition ${crds.join(", ")} (rollback.acrossCRDChanges: true allows it)`,
    );
  const hooks = passed.flatMap((h) => (h.hooks ?? []).filter((k) => k.outcome !== "Skipped"));
  if (hooks.length > 0 && !rule.acrossHooks)
    return refuse(
      `going back to ${short(entry.revision)} would pass a release that ran hook ${[...new Set(hooks.map((k) => `${k.phase} ${k.name}`))].join(", ")} (rollback.acrossHooks: true allows it)`,
    );
  const how = bad.why === "Degraded" ? "stayed Degraded" : "stayed failed to sync";
  return {
    kind: "rollback",
    revision: bad.revision,
    to: { id: entry.id, revision: entry.revision },
    note: {
      from: bad.revision,
      reason: `${short(bad.revision)} ${how} for ${formatDuration(rule.onDegraded)} (since ${bad.since})`,
      evidence: [
        `${short(bad.revision)}: ${bad.why} since ${bad.since}`,
        `${short(entry.revision)}: Healthy from ${healthy.since}${healthy.until ? ` to ${healthy.until}` : ""} (history ${entry.id})`,
      ],
    },
  };
}

/** What history and the check run say of an automatic rollback, after the sync's own message. */
export function autoRollbackText(note: AutoRollbackNote, to: string): string {
  return `automatic rollback from ${short(note.from)} to ${short(to)}: ${note.reason}`;
}
