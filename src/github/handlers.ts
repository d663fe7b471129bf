// Webhook handlers. They only nudge the reconciler or answer people: the reconciler decides what
// to sync, and the reporter tells GitHub what happened.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config/load.ts";
import { commitTitle } from "../source/commit-title.ts";
import { helmInputs, includedDirs } from "../source/includes.ts";
import { approveAs } from "./approve.ts";
import { pinListedApprovers } from "./approver-pins.ts";
import { allows, permissionOf } from "./authorize.ts";
import { parseCommands } from "./commands.ts";
import { handleCommentCommands } from "./comment-commands.ts";
import { checkPullRequestConfig, reportConfigError } from "./config-check.ts";
import { codeSpan, fenced } from "./markdown.ts";
import { withNext } from "./next-step.ts";
import type { Octokit } from "./octokit.ts";
import { isForkPull, preview, previewsEnabled, previewTarget } from "./preview.ts";
import { ProjectRefusal, reportProjectRefusalOnce } from "./project-refusal.ts";
import { checkName, envFromCheckName, envFromPreviewCheckName } from "./reporter.ts";
import { isConfigPath, type RepoInfo, type RepoRuntime, type Runtimes } from "./runtime.ts";
import { truncateBytes } from "./truncate.ts";

interface RepoPayload {
  repository: {
    id: number;
    name: string;
    owner: { login: string };
    html_url: string;
    default_branch: string;
  };
  installation?: { id: number };
}

export function repoInfo(payload: RepoPayload): RepoInfo {
  if (!payload.installation)
    throw new Error("webhook without an installation: is syncward installed as a GitHub App?");
  return {
    id: payload.repository.id,
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    installationId: payload.installation.id,
    htmlUrl: payload.repository.html_url,
    defaultBranch: payload.repository.default_branch,
  };
}

/** The runtime for a payload's repository; config problems are reported at `sha` and give undefined. */
export async function runtimeFor(
  runtimes: Runtimes,
  gh: Octokit,
  payload: RepoPayload,
  sha: string,
  reload = false,
): Promise<RepoRuntime | undefined> {
  const info = repoInfo(payload);
  try {
    // A push that changed the config on the default branch: the config is read at its commit.
    return await runtimes.for(info, reload, reload ? sha : undefined);
  } catch (err) {
    if (err instanceof ProjectRefusal) {
      await reportProjectRefusalOnce(runtimes, gh, info, err);
      return undefined;
    }
    if (!(err instanceof ConfigError)) throw err;
    await reportConfigError(gh, { owner: info.owner, repo: info.repo }, sha, err);
    return undefined;
  }
}

export interface PushPayload extends RepoPayload {
  ref: string;
  before: string;
  after: string;
  deleted: boolean;
  commits: Array<{
    id?: string;
    message?: string;
    added?: string[];
    modified?: string[];
    removed?: string[];
  }>;
  head_commit?: { id: string; message?: string } | null;
  pusher: { name?: string };
  sender?: { login: string; id?: number };
}

export async function onPush(
  runtimes: Runtimes,
  gh: Octokit,
  payload: PushPayload,
  cacheDir: string,
  mergedPulls: Map<string, number>,
): Promise<string[]> {
  if (!payload.ref.startsWith("refs/heads/") || payload.deleted) return [];
  const branch = payload.ref.slice("refs/heads/".length);
  const files = payload.commits.flatMap((c) => [
    ...(c.added ?? []),
    ...(c.modified ?? []),
    ...(c.removed ?? []),
  ]);
  const configChanged = branch === payload.repository.default_branch && files.some(isConfigPath);
  const rt = await runtimeFor(runtimes, gh, payload, payload.after, configChanged);
  if (!rt) return [];
  // A config that lists approvers binds their logins to the accounts that have them now; a
  // failure is not the push's: they are pinned at first use then.
  if (configChanged) await pinListedApprovers(gh, rt).catch(() => []);
  // The payload carries each commit's message: history labels them without asking GitHub.
  for (const c of payload.commits) if (c.id) rt.source.learnTitle(c.id, c.message);
  const title = commitTitle(
    payload.head_commit?.id === payload.after ? payload.head_commit.message : undefined,
  );
  rt.source.learnHead(branch, payload.after, payload.before, title);
  const pr = mergedPulls.get(payload.after);
  if (pr !== undefined) rt.reporter.linkPullRequest(payload.after, pr);
  const actor = payload.sender?.login ?? payload.pusher.name ?? "unknown";
  // Only environments whose sources the push touched, judged on the tree before the push (what
  // the environment rendered from). Without the file list or that tree, every one is nudged.
  const previous = join(cacheDir, payload.before);
  const pushed = {
    revision: payload.after,
    before: payload.before,
    ...(title === undefined ? {} : { title }),
    ...(payload.sender?.id === undefined ? {} : { actorId: payload.sender.id }),
    ...(configChanged ? { config: true } : {}),
  };
  if (files.length === 0 || !existsSync(previous))
    return rt.reconciler.nudgeBranch(branch, pr ? "merge" : "push", actor, undefined, pushed);
  const dirs = new Map<string, string[]>();
  for (const env of rt.config.environments.filter((e) => e.source.branch === branch)) {
    dirs.set(env.name, [
      ...(await includedDirs(previous, env.source.path)),
      ...helmInputs(env.source.path, env.source.helm),
    ]);
  }
  return rt.reconciler.nudgeBranch(
    branch,
    pr ? "merge" : "push",
    actor,
    { files, includes: (env) => dirs.get(env) ?? [""] },
    pushed,
  );
}

export interface PullRequestPayload extends RepoPayload {
  action: string;
  number: number;
  pull_request: {
    merged: boolean | null;
    merge_commit_sha: string | null;
    head: { sha: string; repo?: { id: number } | null };
    base: { ref: string; repo: { id: number } };
    merged_by?: { login: string; id?: number } | null;
  };
  sender: { login: string; id?: number };
}

/** A merge deploys per policy; its commit's outcomes go to one comment on the pull request. */
export async function onPullRequestMerged(
  runtimes: Runtimes,
  gh: Octokit,
  payload: PullRequestPayload,
  mergedPulls: Map<string, number>,
): Promise<string[]> {
  const sha = payload.pull_request.merge_commit_sha;
  if (!payload.pull_request.merged || !sha) return [];
  mergedPulls.set(sha, payload.number);
  if (mergedPulls.size > 500) mergedPulls.delete(mergedPulls.keys().next().value as string);
  const rt = await runtimeFor(runtimes, gh, payload, sha);
  if (!rt) return [];
  rt.reporter.linkPullRequest(sha, payload.number);
  rt.source.learnHead(payload.pull_request.base.ref, sha);
  const merger = payload.pull_request.merged_by ?? payload.sender;
  return rt.reconciler.nudgeBranch(payload.pull_request.base.ref, "merge", merger.login, undefined, {
    revision: sha,
    ...(merger.id === undefined ? {} : { actorId: merger.id }),
  });
}

/** A pull request that changes the configuration gets it checked before merge (config-check.ts). */
export async function onPullRequestConfig(
  runtimes: Runtimes,
  gh: Octokit,
  payload: PullRequestPayload,
): Promise<void> {
  const info = repoInfo(payload);
  await checkPullRequestConfig(
    gh,
    { owner: info.owner, repo: info.repo },
    { number: payload.number, head: payload.pull_request.head.sha },
    async () => {
      try {
        return (await runtimes.for(info))?.config;
      } catch (err) {
        if (err instanceof ConfigError || err instanceof ProjectRefusal) return undefined;
        throw err;
      }
    },
    (proposed) => runtimes.underItsProject(info.owner, info.repo, proposed),
  );
}

/**
 * What merging would change in each environment tracking the base branch, as a preview check run
 * on the head commit. Fork pull requests and opt-in environments are left out (preview.ts).
 */
export async function onPullRequestPreview(
  runtimes: Runtimes,
  gh: Octokit,
  payload: PullRequestPayload,
): Promise<void> {
  const pr = payload.pull_request;
  if (isForkPull(pr)) return;
  const rt = await runtimeFor(runtimes, gh, payload, pr.head.sha);
  if (!rt) return;
  const envs = rt.config.environments.filter((e) => e.source.branch === pr.base.ref && previewsEnabled(e));
  if (envs.length > 0)
    await previewPull(
      rt,
      gh,
      payload.number,
      envs.map((e) => e.name),
    );
}

/** Queues the previews of one pull request; a newer request for it replaces one still waiting. */
function previewPull(rt: RepoRuntime, gh: Octokit, pullNumber: number, envNames: string[]): Promise<void> {
  return rt.previews.enqueue(`#${pullNumber}`, async () => {
    const target = await previewTarget(gh, rt.ref, pullNumber);
    if (target.fork) return;
    for (const name of envNames) await preview(rt, gh, name, target);
  });
}

export interface CheckSuitePayload extends RepoPayload {
  action: string;
  check_suite: { head_sha: string; pull_requests: Array<{ number: number; base: { ref: string } }> };
  sender: { type: string };
}

/**
 * "Re-run all checks" of a pull request's commit redoes its previews, never a sync (a deploy
 * check's own Re-run asks for a pass). GitHub lists no pull request for a fork's suite.
 */
export async function onCheckSuiteRerequested(
  runtimes: Runtimes,
  gh: Octokit,
  payload: CheckSuitePayload,
): Promise<void> {
  const [pull] = payload.check_suite.pull_requests;
  if (!pull || payload.sender.type === "Bot") return;
  const rt = await runtimeFor(runtimes, gh, payload, payload.check_suite.head_sha);
  if (!rt) return;
  const envs = rt.config.environments.filter((e) => e.source.branch === pull.base.ref && previewsEnabled(e));
  if (envs.length > 0)
    await previewPull(
      rt,
      gh,
      pull.number,
      envs.map((e) => e.name),
    );
}

export interface CommentPayload extends RepoPayload {
  comment: { id: number; body: string; user: { login: string; type: string; id: number } };
  issue: {
    number: number;
    user: { login: string; id: number };
    pull_request?: { merged_at?: string | null };
  };
  sender: { login: string; type: string };
}

export async function onIssueComment(
  runtimes: Runtimes,
  gh: Octokit,
  payload: CommentPayload,
): Promise<void> {
  if (!payload.issue.pull_request) return;
  if (payload.sender.type === "Bot" || payload.comment.user.type === "Bot") return;
  const info = repoInfo(payload);
  let rt: RepoRuntime | undefined;
  try {
    rt = await runtimes.for(info);
  } catch (err) {
    if (err instanceof ProjectRefusal) return await reportProjectRefusalOnce(runtimes, gh, info, err);
    if (!(err instanceof ConfigError)) throw err;
    // Only a comment that holds a command is answered ("LGTM" is not), once: edits are not read.
    if (parseCommands(payload.comment.body, []).length === 0) return;
    await gh.rest.issues.createComment({
      owner: info.owner,
      repo: info.repo,
      issue_number: payload.issue.number,
      body: withNext(
        truncateBytes(
          `syncward cannot act: ${codeSpan(err.file)} on ${codeSpan(info.defaultBranch)} is invalid.\n\n${fenced(err.message)}`,
          64_000,
        ),
        `fix ${codeSpan(err.file)} on ${codeSpan(info.defaultBranch)} (the \`syncward / config\` check of its commit points at the lines), then comment the command again.`,
      ),
    });
    return;
  }
  if (!rt) return;
  await handleCommentCommands(rt, gh, {
    commentId: payload.comment.id,
    body: payload.comment.body,
    login: payload.comment.user.login,
    userId: payload.comment.user.id,
    senderType: payload.sender.type,
    pullNumber: payload.issue.number,
    author: payload.issue.user.login,
    authorId: payload.issue.user.id,
    merged: Boolean(payload.issue.pull_request.merged_at),
  });
}

export interface CheckRunPayload extends RepoPayload {
  action: string;
  check_run: { name: string; head_sha: string; pull_requests: Array<{ number: number }> };
  requested_action?: { identifier: string };
  sender: { login: string; type: string; id: number };
}

/**
 * Buttons (Sync, Freeze/Unfreeze) and re-runs; clicks are authorized like comments. A re-run of a
 * preview redoes the preview (never a sync); a re-run of a deploy check asks for a pass.
 */
export async function onCheckRun(
  runtimes: Runtimes,
  gh: Octokit,
  payload: CheckRunPayload,
  log: { warn(o: object, m?: string): void },
): Promise<void> {
  if (payload.sender.type === "Bot") return;
  const previewed = envFromPreviewCheckName(payload.check_run.name);
  if (previewed) {
    // GitHub lists no pull request here for a fork's check run: a fork's preview is never redone.
    const pull = payload.check_run.pull_requests[0];
    if (payload.action !== "rerequested" || !pull) return;
    const rt = await runtimeFor(runtimes, gh, payload, payload.check_run.head_sha);
    const env = rt?.config.environments.find((e) => e.name === previewed);
    if (rt && env && previewsEnabled(env)) await previewPull(rt, gh, pull.number, [env.name]);
    return;
  }
  const envName = envFromCheckName(payload.check_run.name);
  if (!envName) return;
  const rt = await runtimeFor(runtimes, gh, payload, payload.check_run.head_sha);
  if (!rt?.config.environments.some((e) => e.name === envName)) return;
  const controller = rt.reconciler.controller(envName);
  const login = payload.sender.login;
  if (payload.action === "rerequested") {
    controller.nudge("comment", login);
    return;
  }
  const identifier = payload.requested_action?.identifier;
  if (identifier === "approve") {
    await approveButton(rt, gh, controller, payload);
    return;
  }
  if (identifier !== "sync" && identifier !== "freeze" && identifier !== "unfreeze") return;
  const permission = await permissionOf(gh, rt.ref, login);
  // The rules a pending config change is held to, as for `/sync`, `/freeze`, `/unfreeze` comments:
  // a change that lowers a button's permission does not lower it before it is deployed.
  const need = (await controller.rules()).commands[identifier];
  if (!allows(permission, need)) {
    log.warn(
      { login, permission, need, env: envName, action: identifier },
      "refused a check-run button click",
    );
    await rt.reporter.check(gh, envName, payload.check_run.head_sha, {
      title: `${identifier} refused for @${login}`,
      note: `@${login} clicked **${identifier}** but needs **${need}** permission (has **${permission}**). Nothing was changed.`,
      conclusion: "neutral",
    });
    return;
  }
  if (identifier === "sync") {
    if ((await controller.rules()).approval)
      await controller.requestApprovedSync({ trigger: "comment", actor: login, actorId: payload.sender.id });
    else await controller.sync({ trigger: "comment", actor: login });
    return;
  }
  await controller.setFreeze(
    identifier === "freeze" ? { by: login, reason: "frozen from the check run" } : undefined,
  );
  await rt.reporter.check(gh, envName, payload.check_run.head_sha, {
    title: identifier === "freeze" ? `Frozen by @${login}` : `Unfrozen by @${login}`,
    note:
      identifier === "freeze"
        ? "Automated sync and self-heal are off until unfrozen."
        : "The configured sync policy applies again.",
    conclusion: "neutral",
  });
}

/**
 * The Approve button: decided exactly like `/approve` (approve.ts), for the check run's commit,
 * so a commit without a pull request (a direct push) can be approved. What happened shows on
 * the check run; an approval that releases the sync leaves the run to the sync's own report.
 */
async function approveButton(
  rt: RepoRuntime,
  gh: Octokit,
  controller: ReturnType<RepoRuntime["reconciler"]["controller"]>,
  payload: CheckRunPayload,
): Promise<void> {
  const sha = payload.check_run.head_sha;
  const who = payload.sender;
  const permission = await permissionOf(gh, rt.ref, who.login);
  const outcome = await approveAs(
    rt,
    gh,
    controller,
    { login: who.login, id: who.id, bot: who.type === "Bot", permission },
    { kind: "button", headSha: sha },
  );
  if (!outcome.recorded)
    rt.log.warn({ login: who.login, env: controller.env.name }, "refused an Approve click");
  // Released: the sync reports on this run; a second writer here could land after its result.
  if (outcome.released) return;
  const title = outcome.recorded ? `Approved by @${who.login}` : `Approval by @${who.login} refused`;
  const state = await rt.reconciler.store.load(controller.instance);
  if (state.pendingSync?.revision === sha)
    await rt.reporter.approvalNote(gh, controller.env.name, sha, title, outcome.message);
  else
    await rt.reporter.check(gh, controller.env.name, sha, {
      title,
      note: outcome.message,
      conclusion: "neutral",
    });
}

export { checkName };
