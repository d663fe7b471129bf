// An approval, wherever it is given: `/approve <env>` on a pull request or the check run's
// Approve button. Both come here, so both are decided by the same rules, in this order:
// - bots never approve;
// - a listed approver (users, teams) needs read permission, anyone else `commands.approve`, and
//   where approvers are listed nobody else counts;
// - something must be waiting, and the approval must be of exactly that commit;
// - an approval written on a pull request from a fork does not count (its author controls the head);
// - nobody who contributed to what would be deployed approves it (contributors.ts), unless
//   `approval.allowAuthor`: every commit from the last synced revision to the pending one; and
//   when who pushed it cannot be told (no repository activity, and the recorded push events do
//   not lead from the pending revision back to the last synced one), nobody approves.
// People are bound by GitHub user id; the reconciler records the id beside the login, and a
// listed approver's login is pinned to the id it had when first needed (authorize.ts).
import type { EnvironmentConfig } from "../config/types.ts";
import type { EnvironmentController } from "../reconciler/environment-controller.ts";
import type { PendingSync, RecordedPush } from "../state/types.ts";
import { environmentAppearedAfter, floorPermissionRefusal } from "./approver-floor.ts";
import { approverPins, dropUnlistedPins } from "./approver-pins.ts";
import {
  type ApproverPins,
  allows,
  isCollaborator,
  listedApprover,
  notCollaborator,
  type Permission,
} from "./authorize.ts";
import { configContributors } from "./config-range.ts";
import {
  contributionOf,
  contributorsOf,
  type GitHubUser,
  type NamedPerson,
  type RangePull,
  unknownPeople,
} from "./contributors.ts";
import { inertText } from "./markdown.ts";
import type { Octokit } from "./octokit.ts";
import { isForkPull } from "./preview.ts";
import { chainBreak } from "./push-chain.ts";
import { fetchRange, RangeTooLong } from "./range.ts";
import { deployedCommitGone, earlierDeployed, noSharedHistory, rewrittenNote } from "./rewritten-history.ts";
import type { RepoRuntime } from "./runtime.ts";

export interface Approver extends GitHubUser {
  bot: boolean;
  permission: Permission;
}

/** Where the approval was given. */
export type ApprovalPlace =
  | { kind: "comment"; pullNumber: number; pullAuthor?: GitHubUser }
  | { kind: "button"; headSha: string };

export interface ApprovalOutcome {
  ok: boolean;
  /** Says what happened, to the approver: a refusal already starts with "Sorry". */
  message: string;
  /** The approval counted (false for a refusal or nothing to approve). */
  recorded: boolean;
  /** It completed the approvals: the held sync runs now. */
  released?: boolean;
  /** Approved in full, but the upstreams have not proven the commit: it deploys once they have. */
  waitsForProof?: boolean;
  revision?: string;
}

const short = (sha: string) => sha.slice(0, 7);

/** Decides an approval of `controller`'s environment by `who` and, when it counts, records it. */
export async function approveAs(
  rt: RepoRuntime,
  gh: Octokit,
  controller: EnvironmentController,
  who: Approver,
  place: ApprovalPlace,
): Promise<ApprovalOutcome> {
  const name = controller.env.name;
  /** Set when the deployed commit is gone from the branch: every answer after says so. */
  let rewritten: string | undefined;
  const refuse = (reason: string, revision?: string): ApprovalOutcome => ({
    ok: false,
    recorded: false,
    message: `Sorry @${who.login}, you cannot approve **${name}**: ${reason}. Nothing was changed.${rewritten ? `\n\n${rewritten}` : ""}`,
    ...(revision ? { revision } : {}),
  });
  if (who.bot || who.login.endsWith("[bot]")) return refuse("bots never approve deployments");
  const belowFloor = floorPermissionRefusal(controller.env, who.permission);
  if (belowFloor) return refuse(belowFloor);
  // The configured rule first (listed users by the ids pinned in the state); then the rules the pending revision is gated by:
  // a config change that loosens them is held to the stricter of the deployed and the new ones
  // (src/config/stricter.ts), and the approver must pass those too.
  const configured = controller.env;
  const pins = approverPins(rt, controller.instance);
  let note: string | undefined;
  if (configured.approval) {
    const verdict = await refusalUnder(configured, gh, rt, who, place, pins);
    if (verdict.refusal) return refuse(verdict.refusal);
    note = verdict.note;
  }
  const rules = await controller.rules();
  const rule = rules.approval;
  if (!rule) return { ok: false, recorded: false, message: `**${name}** does not require approval.` };
  if (rule !== configured.approval || rules.commands.approve !== configured.commands.approve) {
    const verdict = await refusalUnder(rules, gh, rt, who, place, pins);
    if (verdict.refusal) return refuse(verdict.refusal);
    note ??= verdict.note;
  }

  // A login no longer listed loses its pin: listing it again binds whoever has it then. Not
  // listed means by the deployed rules too: a merged but undeployed config clears no pin.
  await dropUnlistedPins(rt);
  const state = await rt.reconciler.store.load(controller.instance);
  const pending = state.pendingSync;
  if (!pending)
    return { ok: false, recorded: false, message: `Nothing is waiting for approval in **${name}**.` };
  const revision = pending.revision;

  const extraPulls: RangePull[] = [];
  if (place.kind === "comment") {
    const { data: pr } = await gh.rest.pulls.get({ ...rt.ref, pull_number: place.pullNumber });
    if (isForkPull(pr))
      return refuse(
        `#${place.pullNumber} comes from a fork, and approvals written on a fork's pull request do not count; use the **Approve** button on the \`${name}\` check run of \`${short(revision)}\`, or comment on a pull request of this repository`,
      );
    // An approval is tied to the commit it approves: this pull request's commit must be the one waiting.
    const prSha = pr.merged ? pr.merge_commit_sha : pr.head.sha;
    if (prSha !== revision)
      return {
        ok: false,
        recorded: false,
        message: `This approval would be stale: **${name}** is waiting for \`${short(revision)}\`, but this pull request is \`${short(prSha ?? "")}\`. Approvals are tied to the commit they approve; approve on the change that produced \`${short(revision)}\`, or with the **Approve** button of its check run.`,
      };
    extraPulls.push({
      number: pr.number,
      user: pr.user ? { id: pr.user.id, login: pr.user.login } : null,
      mergedBy: pr.merged_by ? { id: pr.merged_by.id, login: pr.merged_by.login } : null,
      commits: [revision],
    });
  } else if (place.headSha !== revision) {
    return {
      ok: false,
      recorded: false,
      message: `This approval would be stale: **${name}** is waiting for \`${short(revision)}\`, but this check run is on \`${short(place.headSha)}\`. Approvals are tied to the commit they approve.`,
    };
  }

  // From the last synced revision, or the one a renamed environment inherits its rules with.
  const base = await controller.base(state);
  if (!rule.allowAuthor) {
    // Under the operator's floor, a first deployment's range starts where the environment appeared.
    let from = base || undefined;
    if (!from && controller.env.floor) {
      const appeared = await environmentAppearedAfter(gh, rt.ref, revision, name);
      if ("refusal" in appeared) return refuse(appeared.refusal, revision);
      from = appeared.base;
    }
    let range: Awaited<ReturnType<typeof fetchRange>>;
    const branch = controller.env.source.branch;
    try {
      range = await fetchRange(gh, rt.ref, from, revision, branch);
    } catch (err) {
      if (err instanceof RangeTooLong) return refuse(err.message, revision);
      // A force push took the deployed commit out of the branch's history: no range starts
      // there, and the pending commit is judged as a whole new release (rewritten-history.ts).
      if (!deployedCommitGone(err, from)) throw err;
      const found = await rangeFromEarlier(gh, rt.ref, state.history, from ?? "", revision, branch);
      if (!found) return refuse(noSharedHistory(name, from ?? "", revision, branch), revision);
      rewritten = rewrittenNote(name, from ?? "", found.base, revision, branch);
      range = found.range;
    }
    range.pulls.push(...extraPulls);
    // Who pushed the revisions of the range: GitHub's repository activity, and the push webhooks
    // the reconciler recorded. Without the activity, a pusher could approve their own push unless
    // the recorded pushes account for every commit: fail closed where they do not.
    const recorded = state.recentPushes ?? [];
    const named = namedPeople(pending, recorded, new Set([revision, ...range.commits.map((c) => c.sha)]));
    const pushEvent = pending.pusher !== undefined || recorded.some((p) => p.after === revision);
    const activity = `GitHub does not show syncward the repository's activity in full (${range.activityStatus ?? "unreadable"})`;
    if (range.pushes === undefined && !pushEvent)
      return refuse(
        `cannot tell who pushed \`${short(revision)}\`: ${activity} and no push event for it has arrived (syncward learned of it by polling), so nobody can be sure they did not push it; grant syncward's GitHub App read access to the repository's activity, or approve after the push event arrives (or set approval.allowAuthor: true)`,
        revision,
      );
    const gap =
      range.pushes === undefined && range.base ? chainBreak(recorded, range.base, revision) : undefined;
    if (gap !== undefined)
      return refuse(
        `cannot tell who pushed every commit of \`${short(range.base ?? "")}..${short(revision)}\`: ${activity}, and the push events syncward recorded do not lead back to the last synced revision (none moved the branch to \`${short(gap)}\`), so whoever pushed the commits before it could be approving them; grant syncward's GitHub App read access to the repository's activity (or set approval.allowAuthor: true)`,
        revision,
      );
    // The pull requests' own commits and pushers: what cannot be read could hide the approver.
    if (range.unreadable)
      return refuse(
        `cannot read ${range.unreadable.join("; ")}, so nobody can be sure they did not contribute (or set approval.allowAuthor: true)`,
        revision,
      );
    // A config change on the default branch that moved what this environment renders.
    const config = await configContributors(gh, rt.ref, rt.info.defaultBranch, controller.env, state);
    if ("refusal" in config) return refuse(config.refusal, revision);
    const people = [...contributorsOf(range, named), ...config.people];
    const hidden = unknownPeople(people, rule.trustedBots);
    if (hidden.length > 0)
      return refuse(
        `${hidden.join("; ")} in what would be deployed, so syncward cannot tell who contributed and nobody can be sure they did not (approval.allowAuthor is false; a bot that acts on its own, like Dependabot, may be listed in approval.trustedBots)`,
        revision,
      );
    const why = contributionOf(people, who);
    if (why !== undefined) {
      const span = range.base ? `\`${short(range.base)}..${short(revision)}\`` : `\`${short(revision)}\``;
      const shown = why.length > 3 ? [...why.slice(0, 3), `${why.length - 3} more`] : why;
      return refuse(
        `you ${shown.join(", ")} in what would be deployed (${span}), and nobody who contributed to a change approves its deployment (approval.allowAuthor is false)`,
        revision,
      );
    }
  }

  // Judged against the range from the last synced revision read above: recorded with it, so the
  // approval stops counting if that revision moves before it is used.
  const result = await controller.approve(revision, who.login, who.id, base, rule.allowAuthor);
  const count = `(${result.approvers.length}/${result.needed})`;
  if (result.refused)
    return {
      ok: false,
      recorded: true,
      released: false,
      revision,
      message: `Approved \`${short(revision)}\` for **${name}** ${count}, but the sync is ${inertText(result.refused)}. Nothing was changed.${rewritten ? `\n\n${rewritten}` : ""}`,
    };
  // Approved in full, but a promoted environment waits for its upstreams' proof of the commit.
  const outcome = result.waiting
    ? `${inertText(result.waiting)}.`
    : result.released
      ? result.endedPin
        ? `deploying; this ends the pin at \`${short(result.endedPin.revision)}\` (rollback to history ${result.endedPin.historyId} by ${result.endedPin.by}).`
        : "deploying."
      : "waiting for more approvals.";
  return {
    ok: true,
    recorded: true,
    released: result.released,
    ...(result.waiting ? { waitsForProof: true } : {}),
    revision,
    message: `Approved \`${short(revision)}\` for **${name}** ${count}; ${outcome}${note ? ` ${note}` : ""}${rewritten ? `\n\n${rewritten}` : ""}`,
  };
}

/**
 * The people the state names beside the range: the pusher of the pending revision (by id when its
 * push webhook gave one), whoever asked for its sync, and whoever the push webhooks recorded
 * moving the branch to any revision of the range (`inRange`).
 */
function namedPeople(
  pending: PendingSync,
  pushes: RecordedPush[],
  inRange: ReadonlySet<string>,
): NamedPerson[] {
  const named: NamedPerson[] = [
    // The actor of a wait a push or merge announced is its pusher; of a poll's, syncward (nobody).
    {
      login: pending.actor,
      ...(pending.actorId === undefined ? {} : { id: pending.actorId }),
      role: pending.manual ? "requested" : "pushed",
    },
  ];
  if (pending.pusher !== undefined)
    named.push({
      login: pending.pusher,
      ...(pending.pusherId === undefined ? {} : { id: pending.pusherId }),
      role: "pushed",
    });
  // Recorded by whichever replica received the push, also after the wait was announced.
  for (const p of pushes.filter((p) => inRange.has(p.after)))
    named.push({
      login: p.login,
      ...(p.id === undefined ? {} : { id: p.id }),
      role: "pushed",
      revision: p.after,
    });
  return named;
}

/**
 * Why `who` may not approve under `env`'s approval rule and permissions, before the range is
 * read; or, when they may, a note for them (listed under a login they renamed).
 */
async function refusalUnder(
  env: Pick<EnvironmentConfig, "approval" | "commands">,
  gh: Octokit,
  rt: RepoRuntime,
  who: Approver,
  place: ApprovalPlace,
  pins: ApproverPins,
): Promise<{ refusal?: string; note?: string }> {
  const rule = env.approval;
  if (!rule) return {};
  // Cheap and certain before anything is read: the pull request's own author.
  if (!rule.allowAuthor && place.kind === "comment" && place.pullAuthor?.id === who.id)
    return {
      refusal: `you opened #${place.pullNumber}, and nobody who contributed to a change approves its deployment (approval.allowAuthor is false)`,
    };
  const listing = await listedApprover(gh, rt.ref, rule, who, pins);
  if (!listing.listed && !listing.open) return { refusal: listing.reason ?? "you are not a listed approver" };
  // Read permission is all a listed approver needs, and on a public repository everyone has it.
  if (
    listing.listed &&
    listing.byLogin &&
    !listing.collaborator &&
    !(await isCollaborator(gh, rt.ref, who.login))
  )
    return { refusal: notCollaborator(listing.byLogin, rt.ref) };
  const need: Permission = listing.listed ? "read" : env.commands.approve;
  if (!allows(who.permission, need))
    return {
      refusal: `approving needs **${need}** permission on this repository${listing.listed ? " (listed approvers need only read)" : ""} and you have **${who.permission}**`,
    };
  return listing.listedAs
    ? {
        note: `(approval.users lists you as @${listing.listedAs}, your login before a rename; the approval counts because it is the same GitHub account, but update approval.users to @${who.login}.)`,
      }
    : {};
}

/**
 * The range from the newest commit the environment ran before the deployed one that GitHub can
 * still compare with the pending commit; undefined when none can (an orphan history, or every
 * earlier commit gone as well), so that nothing is approved without a range to judge.
 */
async function rangeFromEarlier(
  gh: Octokit,
  repo: RepoRuntime["ref"],
  history: ReadonlyArray<{ revision: string; result: string; dryRun?: boolean }>,
  gone: string,
  revision: string,
  branch: string,
): Promise<{ base: string; range: Awaited<ReturnType<typeof fetchRange>> } | undefined> {
  for (const base of earlierDeployed(history, gone)) {
    try {
      return { base, range: await fetchRange(gh, repo, base, revision, branch) };
    } catch (err) {
      if (!deployedCommitGone(err, base)) throw err;
    }
  }
  return undefined;
}
