// What the gate decides, as a pure function of what it was shown: every path that writes to an
// environment (see WritePath) asks it with the exact revision it is about to apply. Which checks
// apply depends on the path (CHECKS); they run in a fixed order (freeze, window, pin, signature,
// approval, required checks), so the first reason a person must act on is the one reported.
import { formatDuration } from "../config/duration.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import type { EnvironmentState } from "../state/types.ts";
import { approvalsOf, countableApprovals } from "./approvals.ts";
import { pinnedWriteRefusal } from "./pin.ts";
import { effectivePolicy } from "./policy.ts";
import { evaluateWindows, selfHealHeldBy } from "./sync-windows.ts";

/**
 * - automated: the loop syncs a new revision of the branch;
 * - retry: another attempt of the same operation, on its revision;
 * - refresh: a retry that would move to the branch's newest revision (retry.refresh);
 * - selfHeal: re-applies the revision already deployed;
 * - manual: a person asked (CLI, comment, Sync button, a released approval, a hand-over).
 */
export type WritePath = "automated" | "retry" | "refresh" | "selfHeal" | "manual";

export type GateCheck = "freeze" | "window" | "pin" | "signature" | "approval" | "checks";

/**
 * The checks each path passes; `approval` on a manual path only where the request needs it. `pin`
 * on every path: at a pinned commit only the render its rollback entry applied is ever written,
 * and on every path but a person's, nothing but the pinned revision (a person naming another
 * revision is refused by the caller, and an approval that ends the pin is a person's).
 */
export const CHECKS: Record<WritePath, readonly GateCheck[]> = {
  automated: ["freeze", "window", "pin", "signature", "approval", "checks"],
  refresh: ["freeze", "window", "pin", "signature", "approval", "checks"],
  retry: ["freeze", "pin", "signature"],
  selfHeal: ["freeze", "window", "pin"],
  manual: ["freeze", "window", "pin", "signature", "approval", "checks"],
};

export interface GateInput {
  path: WritePath;
  revision: string;
  /** The rules in force for this revision (the stricter of the deployed and the new config, floors applied). */
  rules: EnvironmentConfig;
  state: EnvironmentState;
  /** The revision approvals were judged against (Gate.base); the last synced revision when absent. */
  base?: string;
  now: Date;
  /** A manual request from someone allowed to override a freeze (`/sync --force`, `app sync --force`). */
  ignoreFreeze?: boolean;
  /** Whether the request must be approved (a comment or button on a gated environment; never the CLI). */
  needsApproval?: boolean;
  /** policy.requireSignedCommits: why the revision is not acceptably signed, if it is not (asked only when it applies). */
  signatureProblem?: string;
  /** requireChecks: the checks that have not passed on the revision (asked only when it applies). */
  missingChecks?: string[];
  /** Fingerprint of the environment's configuration in force (approvedConfigOf): approvals given under another do not count. */
  config?: string;
  /** Why the new config needs the old rule, when it weakens a guard (for the waiting message). */
  weakens?: string[];
  /** Digest of the render about to be applied (render-binding.ts): approvals of another render do not count. */
  render?: string;
  /**
   * Why the render about to be applied at a pinned commit is not the one its rollback entry
   * applied (pin.ts pinnedRenderRefusal), when it is not.
   */
  pinnedRender?: string;
  /**
   * "the render of abc1234 changed since it was approved: ...", when the deployed revision now
   * renders otherwise or approvals were given for another render: a new release, never healed.
   */
  renderChanged?: string;
}

export type GateDecision =
  /** `approvals`: who approved the revision, where the approval check applied. */
  | { allowed: true; approvals?: string[] }
  | {
      allowed: false;
      check: GateCheck;
      /** "refused: frozen by @alice (release night)": what the reply, check run and deployment status say. */
      reason: string;
      /** A window: when it opens. */
      until?: Date;
      /** Approval: who approved so far, how many are needed, how many approvals lapsed. */
      approvals?: string[];
      needed?: number;
      expired?: number;
    };

/** Whether `check` applies to this request. */
export function applies(
  check: GateCheck,
  input: Pick<GateInput, "path" | "needsApproval" | "rules">,
): boolean {
  if (!CHECKS[input.path].includes(check)) return false;
  if (check === "approval")
    return Boolean(input.rules.approval) && (input.path !== "manual" || Boolean(input.needsApproval));
  if (check === "signature") return input.rules.policy.requireSignedCommits;
  if (check === "checks") return (input.rules.requireChecks ?? false) !== false;
  return true;
}

export function decideGate(input: GateInput): GateDecision {
  const { rules, state, now, path } = input;
  const on = (check: GateCheck) => applies(check, input);

  if (on("freeze")) {
    // A forced sync passes a freeze, and so do the retries of that same operation.
    if (state.freeze && !((path === "manual" || path === "retry") && input.ignoreFreeze)) {
      const f = state.freeze;
      return {
        allowed: false,
        check: "freeze",
        reason: `refused: frozen by @${f.by} since ${f.at}${f.reason ? ` (${f.reason})` : ""}; unfreeze ${rules.name} first${path === "manual" ? " or force the sync" : ""}`,
      };
    }
    if (path === "selfHeal" && !effectivePolicy(rules, state).selfHeal)
      return { allowed: false, check: "freeze", reason: `refused: self-heal is off for ${rules.name}` };
  }

  if (on("window")) {
    if (path === "selfHeal") {
      const held = selfHealHeldBy(rules.syncWindows, now);
      if (held) return { allowed: false, check: "window", reason: `refused: self-heal held: ${held}` };
    } else {
      const w = evaluateWindows(rules.syncWindows, now, path === "manual");
      if (!w.allowed)
        return {
          allowed: false,
          check: "window",
          reason: w.nextOpen
            ? `refused: sync window closed until ${w.nextOpen.toISOString()} (${w.reason})`
            : `refused: sync window closed (${w.reason})`,
          ...(w.nextOpen ? { until: w.nextOpen } : {}),
        };
    }
  }

  if (on("pin") && input.pinnedRender) return { allowed: false, check: "pin", reason: input.pinnedRender };
  // A release or a retry begun before a rollback pinned the environment (here or on another
  // replica) stops at its next write: only the pinned revision is written by the machine.
  const elsewhere =
    on("pin") && path !== "manual" && state.pin
      ? pinnedWriteRefusal(state.pin, input.revision, rules.name)
      : undefined;
  if (elsewhere) return { allowed: false, check: "pin", reason: elsewhere };

  // Self-heal re-applies the approved render only: a differing one waits for approval as a new release.
  if (path === "selfHeal" && input.renderChanged && rules.approval)
    return {
      allowed: false,
      check: "approval",
      reason: `waiting for approval (0/${rules.approval.minimum}): ${input.renderChanged}; self-heal applies only what was approved`,
      approvals: [],
      needed: rules.approval.minimum,
    };

  if (on("signature") && input.signatureProblem)
    return {
      allowed: false,
      check: "signature",
      reason: `${input.signatureProblem}; environment ${rules.name} deploys only signed commits (policy.requireSignedCommits)`,
    };

  let approved: string[] | undefined;
  if (on("approval") && rules.approval) {
    const needed = rules.approval.minimum;
    // While pinned elsewhere, only approvals given after the pin count: they end it.
    const countable = countableApprovals(state, input.revision);
    const { approvers, expired, rejudged, unchecked, reconfigured } = approvalsOf(
      countable.state,
      input.revision,
      now,
      rules.approval.expiresAfter,
      !rules.approval.allowAuthor,
      input.base,
      input.config,
      input.render,
    );
    // A retry moves a gated environment nowhere: what was approved is what it retries. (A newer
    // revision still lacking approvals is reported as waiting, below.)
    if (path === "refresh" && approvers.length >= needed)
      return {
        allowed: false,
        check: "approval",
        reason: `a retry does not move ${rules.name} to another revision, approved or not: it retries what was approved`,
        approvals: approvers,
        needed,
      };
    if (approvers.length < needed) {
      const lapsed =
        expired > 0
          ? `; ${expired} approval(s) expired after ${formatDuration(rules.approval.expiresAfter ?? 0)}`
          : "";
      const moved =
        rejudged > 0
          ? `; ${rejudged} approval(s) were given when ${rules.name} last synced another revision, and what would be deployed has changed since: approve again`
          : "";
      const blind =
        unchecked > 0
          ? `; ${unchecked} approval(s) were given while approval.allowAuthor was true, without checking who contributed: approve again`
          : "";
      const changed =
        reconfigured > 0
          ? `; ${reconfigured} approval(s) were given under another configuration of ${rules.name} (its source or rules changed since): approve again`
          : "";
      const why =
        input.weakens && input.weakens.length > 0
          ? `; the config change is held to the old rule (${input.weakens.join("; ")})`
          : "";
      const rendered = input.renderChanged ? `; ${input.renderChanged}` : "";
      const pinned =
        countable.beforePin > 0
          ? `; ${countable.beforePin} approval(s) were given before ${rules.name} was pinned at ${state.pin?.revision.slice(0, 7)}: approve again`
          : "";
      return {
        allowed: false,
        check: "approval",
        reason: `waiting for approval (${approvers.length}/${needed})${rendered}${lapsed}${changed}${moved}${blind}${pinned}${why}`,
        approvals: approvers,
        needed,
        expired,
      };
    }
    approved = approvers;
  }

  if (on("checks") && input.missingChecks && input.missingChecks.length > 0)
    return {
      allowed: false,
      check: "checks",
      reason: `waiting for checks to pass on ${input.revision.slice(0, 7)}: ${input.missingChecks.join(", ")}`,
    };

  return approved ? { allowed: true, approvals: approved } : { allowed: true };
}
