// The operation history of an environment: the last N syncs, newest last, with ids that only grow.
import type { EnvironmentState, HistoryEntry } from "./types.ts";

/**
 * Appends `entry` to `state.history` (in place) with the next id, then trims the history to the
 * newest `limit` entries. Ids stay monotonic after trimming (max id + 1), so `history 7` keeps
 * naming the same operation. A `limit` below 1 keeps just the new entry: an empty history would
 * forget the highest id and start numbering again.
 */
export function appendHistory(
  state: EnvironmentState,
  entry: Omit<HistoryEntry, "id">,
  limit: number,
): HistoryEntry {
  const id = state.history.reduce((max, e) => Math.max(max, e.id), 0) + 1;
  const added: HistoryEntry = { id, ...entry };
  added.id = id; // even if the caller's object carried an id of its own
  const keep = Number.isNaN(limit) ? 1 : Math.max(1, Math.floor(limit));
  state.history = [...state.history, added].slice(-keep);
  return added;
}
