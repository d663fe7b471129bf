// Rollback and pins, the pure part: which history entry a rollback re-deploys, what a pinned
// environment says to a sync that names another revision, and what history records. The
// controller (environment-controller.ts) reads the state, asks these, and writes.
import type { EnvironmentState, HistoryEntry, PinRecord, RollbackNote } from "../state/types.ts";
import { short } from "../util/short-sha.ts";

/** An entry that deployed its revision: a success, and not an unpin (which deployed nothing). */
function deployed(h: Pick<HistoryEntry, "result" | "trigger">): boolean {
  return h.result === "Succeeded" && h.trigger !== "unpin";
}

/** What a rollback names: a history entry by id, or a commit by its sha (or a prefix of it). */
export type RollbackTarget = { historyId: number } | { commit: string };

/** The shortest commit prefix a rollback takes: as short as `git log --oneline` shows, no shorter. */
export const MIN_COMMIT_PREFIX = 7;

/**
 * `3` (a history id) or `a1b2c3d` (a commit: 7 to 40 hex digits), as `app rollback` and
 * `/rollback` take it. A whole number of fewer than 7 digits is an id; from 7 digits on it is a
 * commit: an all-digit sha prefix is not rare, and an id that long takes a million operations.
 */
export function rollbackTargetOf(text: string): RollbackTarget | { error: string } {
  // The error says what the word is not; the caller names the word as its reader wrote it.
  if (/^[1-9][0-9]{0,5}$/.test(text)) return { historyId: Number(text) };
  if (new RegExp(`^[0-9a-f]{${MIN_COMMIT_PREFIX},40}$`, "i").test(text))
    return { commit: text.toLowerCase() };
  return {
    error: `is neither a history id (a whole number) nor a commit (${MIN_COMMIT_PREFIX} to 40 hex digits)`,
  };
}

type Row = Pick<HistoryEntry, "id" | "revision" | "result" | "trigger" | "renderDigest">;

/**
 * The history entry a rollback re-deploys: the one named by its id; for a commit, the newest that
 * deployed it (an unknown or ambiguous prefix is refused); else the newest that deployed a
 * revision other than the current one (`argocd app rollback` without an id takes the previous).
 */
export function rollbackTarget(
  history: ReadonlyArray<Row>,
  current: string | undefined,
  env: string,
  target?: RollbackTarget,
): { entry: Pick<HistoryEntry, "id" | "revision" | "renderDigest"> } | { error: string } {
  const listing = `\`syncward app history ${env}\` lists them`;
  if (target && "historyId" in target) {
    const id = target.historyId;
    const entry = history.find((h) => h.id === id);
    if (!entry) return { error: `${env} has no history entry ${id} (${listing})` };
    if (!deployed(entry))
      return { error: `history entry ${id} of ${env} deployed nothing (${entry.result}, ${entry.trigger})` };
    return { entry };
  }
  if (target) return commitEntry(history, env, target.commit.toLowerCase(), listing);
  const entry = [...history].reverse().find((h) => deployed(h) && h.revision !== current);
  if (!entry) return { error: `${env} has no earlier successful sync of another revision (${listing})` };
  return { entry };
}

/** The newest entry that deployed the commit `prefix` names, if it names exactly one. */
function commitEntry(
  history: ReadonlyArray<Row>,
  env: string,
  prefix: string,
  listing: string,
): { entry: Pick<HistoryEntry, "id" | "revision" | "renderDigest"> } | { error: string } {
  const matching = history.filter((h) => deployed(h) && h.revision.startsWith(prefix));
  const revisions = [...new Set(matching.map((h) => h.revision))];
  if (revisions.length > 1)
    return {
      error: `commit ${prefix} is ambiguous in the history of ${env} (${revisions.map(short).join(", ")}); give more of it`,
    };
  const entry = matching.at(-1);
  if (!entry)
    return { error: `${env} has no successful sync of commit ${prefix} in its history (${listing})` };
  return { entry };
}

/** The pin a rollback to `entry` sets; `from`: the release it goes back from (rolledBackFrom). */
export function pinOf(
  entry: Pick<HistoryEntry, "id" | "revision" | "renderDigest">,
  by: string,
  reason: string,
  now = new Date(),
  from?: string,
): PinRecord {
  return {
    revision: entry.revision,
    historyId: entry.id,
    by,
    at: now.toISOString(),
    reason,
    ...(entry.renderDigest ? { renderDigest: entry.renderDigest } : {}),
    ...(from ? { from } : {}),
  };
}

/**
 * The release a rollback goes back from: a pin already standing keeps its own (a second rollback
 * does not make the first bad release good); else the bad release an automatic rollback names,
 * else the release that failed last (stuck: it may have written half of itself), else the one
 * running.
 */
export function rolledBackFrom(
  state: Pick<EnvironmentState, "pin" | "stuck" | "lastSyncedRevision">,
  bad?: string,
): string | undefined {
  return state.pin?.from ?? bad ?? state.stuck?.revision ?? state.lastSyncedRevision;
}

/**
 * Why a write of `revision` is refused while `pin` holds another revision, on the paths nobody
 * chose the revision on (the automated pass, a retry, a refresh, self-heal): a release or a retry
 * begun before the pin was set does not go on writing. Undefined: it is the pinned revision.
 */
export function pinnedWriteRefusal(
  pin: Pick<PinRecord, "revision" | "by" | "historyId">,
  revision: string,
  env: string,
): string | undefined {
  if (pin.revision === revision) return undefined;
  return `refused: ${env} is pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId}), and nothing but ${short(pin.revision)} is written while it stands: ${short(revision)} (begun before the pin) was not written`;
}

/**
 * Why the approvals counted for `revision` do not end `pin`: fewer than the rule in force needs
 * (`minimum`, the stricter of the deployed and the current rule), and never none, whatever a
 * shortcut for the deployed revision says; none at all without an approval rule. Undefined: enough.
 */
export function pinEndApprovalsRefusal(
  pin: Pick<PinRecord, "revision" | "by" | "historyId">,
  revision: string,
  env: string,
  approvers: readonly string[],
  minimum: number | undefined,
): string | undefined {
  const needed = minimum === undefined ? undefined : Math.max(1, minimum);
  if (needed !== undefined && approvers.length >= needed) return undefined;
  const pinned = `${env} is pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId})`;
  if (needed === undefined)
    return `refused: ${pinned}, and without an approval rule only /unpin ${env} ends it; nothing was unpinned`;
  return `refused: ${pinned}, and only approvals of ${short(revision)} given after the pin end it: ${approvers.length} of ${needed} counted; nothing was unpinned`;
}

/**
 * Why a render of the pinned revision may not be applied: it is not the render the rolled-back-to
 * entry applied (a chart range, a remote base or the operator's limits moved since). Undefined:
 * it is that render, or the entry predates recorded digests, or the revision is not the pin's.
 */
export function pinnedRenderRefusal(
  pin: Pick<PinRecord, "revision" | "historyId" | "renderDigest"> | undefined,
  revision: string,
  digest: string,
): string | undefined {
  if (!pin?.renderDigest || pin.revision !== revision || pin.renderDigest === digest) return undefined;
  return `the render of ${short(revision)} today is not the one history entry ${pin.historyId} applied (digest ${pin.renderDigest.slice(0, 12)}, now ${digest.slice(0, 12)}): something it renders from outside the commit changed (a chart version range, a remote base, the operator's limits); nothing was written`;
}

/** What a rollback's history entry keeps of it (`/history`, `app history`). */
export function rollbackNoteOf(pin: PinRecord): RollbackNote {
  return { historyId: pin.historyId, revision: pin.revision, by: pin.by, reason: pin.reason };
}

/** A rollback as `/history` and `app history` show it: `rollback to history 3 (a1b2c3d) by alice: why`. */
export function rollbackText(note: RollbackNote): string {
  return `rollback to history ${note.historyId} (${short(note.revision)}) by ${note.by}${note.reason ? `: ${note.reason}` : ""}`;
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

/**
 * What the wait for approval of a newer commit of a gated, pinned environment's branch says
 * (after `waiting for approval (0/1)`): approving it deploys it and ends the pin.
 */
export function pinnedApprovalText(
  pin: Pick<PinRecord, "revision" | "by" | "historyId">,
  env: string,
): string {
  return `pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId}); /approve ${env} deploys this commit and ends the pin, or /unpin ${env}`;
}

/**
 * Why an approval of `revision` does not end the pin: it is not a newer commit of the branch the
 * pinned commit is on (a force push rewrote the history since, or the commit left the branch).
 */
export function pinNotEndedRefusal(
  pin: Pick<PinRecord, "revision" | "by" | "historyId">,
  revision: string,
  env: string,
  branch: string,
): string {
  return `refused: ${env} is pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId}), and ${short(revision)} is not a newer commit of ${branch} after it (the branch's history was rewritten, or the commit left the branch), so approving it does not end the pin; /unpin ${env} first`;
}

/**
 * Why an approval of `revision` does not end a pin whose rollback went back from `pin.from`: it
 * is that release (the one rolled back from), or not a commit after it; the fix goes on top of it.
 */
export function pinNotAfterRefusal(
  pin: Pick<PinRecord, "revision" | "by" | "historyId"> & { from: string },
  revision: string,
  env: string,
  branch: string,
): string {
  const what =
    revision === pin.from
      ? "the release it went back from"
      : `not a commit of ${branch} after ${short(pin.from)}, the release it went back from`;
  return `refused: ${env} is pinned at ${short(pin.revision)} by ${pin.by} (rollback to history ${pin.historyId}), and ${short(revision)} is ${what}, so approving it does not end the pin; approve a commit on top of it, or /unpin ${env}`;
}

/** The history entry of a pin that an approval of a newer commit ended. */
export function pinEndedMessage(pin: PinRecord, revision: string, approvers: readonly string[]): string {
  const by = approvers.length > 0 ? ` by ${approvers.map((a) => `@${a}`).join(", ")}` : "";
  return `pin at ${short(pin.revision)} (rollback to history ${pin.historyId} by ${pin.by}) ended by the approval of ${short(revision)}${by}; ${short(revision)} deploys`;
}

/** `app get`'s line: who pinned what, and how to resume. */
export function pinnedLine(pin: PinRecord, env: string): string {
  return `${short(pin.revision)} by ${pin.by} at ${pin.at}: \`syncward app unpin ${env}\` resumes`;
}

/**
 * What a pinned environment says wherever it is shown (the check run, the deployment status):
 * `pinned at a1b2c3d by alice (rollback to history 3); /unpin prod resumes`. `mark` shapes the
 * parts taken from elsewhere (a code span in markdown); `brief` leaves out who and which entry,
 * for a line with little room.
 */
export function pinnedText(
  pin: Pick<PinRecord, "revision" | "by" | "historyId">,
  env: string,
  mark: (text: string) => string = (t) => t,
  brief = false,
): string {
  const who = brief ? "" : ` by ${mark(pin.by)} (rollback to history ${pin.historyId})`;
  return `pinned at ${mark(short(pin.revision))}${who}; ${mark(`/unpin ${env}`)} resumes`;
}
