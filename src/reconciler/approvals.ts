// Approvals of an environment's pending revision, as kept in its state. Who may approve is the
// GitHub layer's call, made before one is recorded; here they are counted: per revision, one per
// person (their GitHub id when known, else their login), only while not expired, and only while
// the environment's last synced revision is still the one the approver was judged against.
import type { ApprovalRecord, EnvironmentState } from "../state/types.ts";

const who = (a: ApprovalRecord) => (a.id !== undefined ? `id:${a.id}` : `login:${a.by.toLowerCase()}`);

/**
 * Distinct approvers of `revision` whose approval has not lapsed, how many lapsed, how many were
 * judged against another last synced revision (`rejudged`) and how many were given without
 * looking at contributors (`unchecked`, under `approval.allowAuthor`); neither of the last two
 * counts when `sameBase`, which is false where contributors do not matter (`allowAuthor`).
 * Approvals given under another configuration than `config` (`reconfigured`) never count, nor
 * those given for another render of the revision than `render` (`rerendered`, render-binding.ts).
 */
export function approvalsOf(
  state: Pick<EnvironmentState, "pendingApprovals" | "lastSyncedRevision">,
  revision: string,
  now: Date = new Date(),
  expiresAfterMs?: number,
  sameBase = true,
  /** What they were to be judged against: the last synced revision, or the one a never-synced environment inherits. */
  base = state.lastSyncedRevision ?? "",
  /** Fingerprint of the configuration in force (approvedConfigOf); absent: not compared. */
  config?: string,
  /** Digest of the render about to be applied; absent: not compared. */
  render?: string,
): {
  approvers: string[];
  expired: number;
  rejudged: number;
  unchecked: number;
  reconfigured: number;
  rerendered: number;
} {
  const judged = (a: ApprovalRecord) => !sameBase || a.base === undefined || a.base === base;
  const checked = (a: ApprovalRecord) => !sameBase || !a.unchecked;
  const configured = (a: ApprovalRecord) =>
    (config === undefined || a.config === undefined || a.config === config) &&
    (render === undefined || a.render === undefined || a.render === render);
  const all = state.pendingApprovals.filter((a) => a.sha === revision);
  const reconfig = (a: ApprovalRecord) =>
    config !== undefined && a.config !== undefined && a.config !== config;
  // Given under another configuration is the reason to tell, even when the render moved with it.
  const rerendered = new Set(
    all
      .filter((a) => render !== undefined && a.render !== undefined && a.render !== render && !reconfig(a))
      .map(who),
  );
  const reconfigured = new Set(all.filter((a) => !configured(a)).map(who));
  const mine = all.filter((a) => configured(a) && judged(a) && checked(a));
  const rejudged = new Set(all.filter((a) => configured(a) && !judged(a)).map(who));
  const unchecked = new Set(all.filter((a) => configured(a) && judged(a) && !checked(a)).map(who));
  const live = (a: ApprovalRecord) =>
    expiresAfterMs === undefined || now.getTime() - Date.parse(a.at) < expiresAfterMs;
  const seen = new Map<string, string>();
  const lapsed = new Set<string>();
  for (const a of mine) {
    if (live(a)) seen.set(who(a), a.by);
    else lapsed.add(who(a));
  }
  return {
    approvers: [...seen.values()],
    expired: [...lapsed].filter((k) => !seen.has(k)).length,
    rejudged: [...rejudged].filter((k) => !seen.has(k)).length,
    unchecked: [...unchecked].filter((k) => !seen.has(k)).length,
    reconfigured: [...reconfigured].filter((k) => !seen.has(k) && !rerendered.has(k)).length,
    rerendered: [...rerendered].filter((k) => !seen.has(k)).length,
  };
}

/** Adds `by`'s approval of `revision` (once per person and revision; a repeat renews its time). */
export function addApproval(state: EnvironmentState, record: ApprovalRecord): void {
  const key = who(record);
  state.pendingApprovals = state.pendingApprovals.filter((a) => !(a.sha === record.sha && who(a) === key));
  state.pendingApprovals.push(record);
}

/**
 * Withdraws `by`'s approvals of every revision not yet deployed (`/unapprove`). Returns the
 * revisions they had approved.
 */
export function withdrawApproval(state: EnvironmentState, by: { login: string; id?: number }): string[] {
  const mine = (a: ApprovalRecord) =>
    by.id !== undefined && a.id !== undefined
      ? a.id === by.id
      : a.by.toLowerCase() === by.login.toLowerCase();
  const withdrawn = state.pendingApprovals.filter(mine).map((a) => a.sha);
  state.pendingApprovals = state.pendingApprovals.filter((a) => !mine(a));
  return [...new Set(withdrawn)];
}

/**
 * The approvals that may count for `revision`: while a pin holds the environment at another
 * revision, only those given after the pin was set (whoever approved before it never saw it, and
 * an approval of a newer commit ends the pin). `beforePin`: how many of `revision`'s were left out.
 */
export function countableApprovals<S extends Pick<EnvironmentState, "pendingApprovals" | "pin">>(
  state: S,
  revision: string,
): { state: S; beforePin: number } {
  const pin = state.pin;
  if (!pin || pin.revision === revision) return { state, beforePin: 0 };
  const set = Date.parse(pin.at);
  const after = (a: ApprovalRecord) => a.sha !== revision || Date.parse(a.at) > set;
  const kept = state.pendingApprovals.filter(after);
  return {
    state: { ...state, pendingApprovals: kept },
    beforePin: state.pendingApprovals.length - kept.length,
  };
}
