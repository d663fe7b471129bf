// Rollback and pins, the pure part: which history entry a rollback re-deploys, what a pinned
// environment says to a sync that names another revision, and what history records. The
// controller (environment-controller.ts) reads the state, asks these, and writes.
import type { HistoryEntry, PinRecord } from "../state/types.ts";

const short = (sha: string) => sha.slice(0, 7);

/** An entry that deployed its revision: a success, and not an unpin (which deployed nothing). */
function deployed(h: Pick<HistoryEntry, "result" | "trigger">): boolean {
  return h.result === "Succeeded" && h.trigger !== "unpin";
}

/**
 * The history entry a rollback re-deploys: the one named by `id`, else the newest that deployed a
 * revision other than the current one (`argocd app rollback` without an id takes the previous).
 */
export function rollbackTarget(
  history: ReadonlyArray<Pick<HistoryEntry, "id" | "revision" | "result" | "trigger">>,
  current: string | undefined,
  env: string,
  id?: number,
): { entry: Pick<HistoryEntry, "id" | "revision"> } | { error: string } {
  const listing = `\`syncward app history ${env}\` lists them`;
  if (id !== undefined) {
    const entry = history.find((h) => h.id === id);
    if (!entry) return { error: `${env} has no history entry ${id} (${listing})` };
    if (!deployed(entry))
      return { error: `history entry ${id} of ${env} deployed nothing (${entry.result}, ${entry.trigger})` };
    return { entry };
  }
  const entry = [...history].reverse().find((h) => deployed(h) && h.revision !== current);
  if (!entry) return { error: `${env} has no earlier successful sync of another revision (${listing})` };
  return { entry };
}

/** The pin a rollback to `entry` sets. */
export function pinOf(
  entry: Pick<HistoryEntry, "id" | "revision">,
  by: string,
  reason: string,
  now = new Date(),
): PinRecord {
  return { revision: entry.revision, historyId: entry.id, by, at: now.toISOString(), reason };
}

/** What the rollback's history entry says before the sync's own message. */
export function rollbackNote(pin: PinRecord): string {
  const why = pin.reason ? ` (${pin.reason})` : "";
  return `rollback to history ${pin.historyId} (${short(pin.revision)}) by ${pin.by}, pinned${why}`;
}

/** The unpin's history entry message: what was pinned, by which rollback, and what happens next. */
export function unpinMessage(pin: PinRecord, by: string, branch: string): string {
  return `unpinned ${short(pin.revision)} (pinned by ${pin.by} at ${pin.at}, rollback to history ${pin.historyId}) by ${by}; the next sync takes the head of ${branch}`;
}

/**
 * Why a sync naming `revision` is refused while pinned elsewhere: the next automated pass would
 * put the pinned revision straight back, so the request would not stick. Undefined: it may run.
 */
export function pinnedRefusal(pin: PinRecord | undefined, revision: string, env: string): string | undefined {
  if (!pin || pin.revision === revision) return undefined;
  return `${env} is pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId}): \`syncward app unpin ${env}\` first, or \`syncward app rollback ${env} <id>\` to pin another deployed revision`;
}

/** `app get`'s line: who pinned what, and how to resume. */
export function pinnedLine(pin: PinRecord, env: string): string {
  return `${short(pin.revision)} by ${pin.by} at ${pin.at}: \`syncward app unpin ${env}\` resumes`;
}
