// Webhook events for app tests, built from GitHub's own example payloads
// (@octokit/webhooks-examples) and patched where the examples fall short: an `installation`,
// `merged: true` on a merge, a comment that belongs to a pull request, our repository and sender.
//
//   await probot.receive(issueCommentEvent({ body: "/sync prod", sender: { login: "alice" } }));
import { createHash, randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type { EmitterWebhookEvent } from "@octokit/webhooks";

const require = createRequire(import.meta.url);

export const DEFAULT_OWNER = "acme";
export const DEFAULT_REPO = "shop";
export const DEFAULT_INSTALLATION_ID = 4242;
export const DEFAULT_BRANCH = "main";

/** A stable full SHA for a name: `fakeSha("pr-head")`. */
export function fakeSha(seed: string): string {
  return createHash("sha1").update(seed).digest("hex");
}

/**
 * GitHub's id of a test repository: stable per full name, so events about one repository agree,
 * and two repositories (the same or colliding names aside) have two. A rename keeps the old one.
 */
export function repoIdOf(fullName: string): number {
  return (
    100_000 + (Number.parseInt(fakeSha(`repository ${fullName.toLowerCase()}`).slice(0, 6), 16) % 8_000_000)
  );
}

export interface EventOptions {
  owner?: string;
  repo?: string;
  /** GitHub's id of the repository (default: repoIdOf its full name). */
  repoId?: number;
  installationId?: number;
  /** Who triggered the event. A bot is `{ login: "renovate[bot]", type: "Bot" }`. */
  sender?: { login?: string; type?: "User" | "Bot"; id?: number };
  /** X-GitHub-Delivery; a manual redelivery keeps the same one. */
  deliveryId?: string;
}

type Payload = Record<string, unknown>;

interface Definition {
  name: string;
  examples: Payload[];
}

let definitions: Definition[] | undefined;

/** A deep copy of the first example of `name` (and `action`) that `prefer` likes, else the first one. */
function example(
  name: string,
  action: string | undefined,
  prefer: (p: Payload) => boolean = () => true,
): Payload {
  definitions ??= require("@octokit/webhooks-examples") as Definition[];
  const all = (definitions.find((d) => d.name === name)?.examples ?? []).filter(
    (e) => action === undefined || e.action === action,
  );
  const chosen = all.find(prefer) ?? all[0];
  if (chosen === undefined)
    throw new Error(`@octokit/webhooks-examples has no ${name}${action ? `.${action}` : ""} example`);
  return structuredClone(chosen);
}

function obj(v: unknown): Payload {
  return v as Payload;
}

/**
 * A stable GitHub user id for a login in tests: syncward binds people by id, so two logins must
 * never share the example payload's one id.
 */
export function userIdOf(login: string): number {
  return 1_000_000 + (Number.parseInt(fakeSha(`user ${login.toLowerCase()}`).slice(0, 6), 16) % 8_000_000);
}

/** Points the payload at owner/repo everywhere (URLs included) and applies the common options. */
function patch(payload: Payload, o: EventOptions): Payload {
  const repository = obj(payload.repository);
  const oldFullName = String(repository.full_name);
  const owner = o.owner ?? DEFAULT_OWNER;
  const repo = o.repo ?? DEFAULT_REPO;
  const fullName = `${owner}/${repo}`;
  const out = JSON.parse(JSON.stringify(payload).replaceAll(oldFullName, fullName)) as Payload;

  for (const r of [
    out.repository,
    obj(obj(out.pull_request)?.base)?.repo,
    obj(obj(out.pull_request)?.head)?.repo,
  ]) {
    if (r === undefined || r === null) continue;
    const rr = obj(r);
    rr.name = repo;
    rr.full_name = fullName;
    rr.id = o.repoId ?? repoIdOf(fullName);
    obj(rr.owner).login = owner;
    rr.default_branch = DEFAULT_BRANCH;
  }
  out.installation = {
    id: o.installationId ?? DEFAULT_INSTALLATION_ID,
    node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==",
  };
  const sender = obj(out.sender);
  if (o.sender?.login !== undefined) {
    sender.login = o.sender.login;
    // Distinct people have distinct GitHub ids (approvals are counted per id): one per login.
    sender.id = userIdOf(o.sender.login);
  }
  if (o.sender?.type !== undefined) sender.type = o.sender.type;
  if (o.sender?.id !== undefined) sender.id = o.sender.id;
  return out;
}

function event<N extends EmitterWebhookEvent["name"]>(
  name: N,
  payload: Payload,
  o: EventOptions,
): EmitterWebhookEvent<N> {
  return { id: o.deliveryId ?? randomUUID(), name, payload } as unknown as EmitterWebhookEvent<N>;
}

export interface PushOptions extends EventOptions {
  /** Branch name (`main`) or full ref (`refs/heads/main`). */
  ref?: string;
  before?: string;
  after?: string;
  /** Files changed by the (single) pushed commit. */
  added?: string[];
  modified?: string[];
  removed?: string[];
}

/** A push of one commit to a branch (default `main`). */
export function pushEvent(o: PushOptions = {}): EmitterWebhookEvent<"push"> {
  const p = patch(
    example(
      "push",
      undefined,
      (e) => String(e.ref).startsWith("refs/heads/") && (e.commits as unknown[]).length > 0,
    ),
    o,
  );
  const ref =
    o.ref === undefined
      ? `refs/heads/${DEFAULT_BRANCH}`
      : o.ref.startsWith("refs/")
        ? o.ref
        : `refs/heads/${o.ref}`;
  const after = o.after ?? fakeSha(`push ${ref}`);
  p.ref = ref;
  p.before = o.before ?? fakeSha(`before ${after}`);
  p.after = after;
  p.created = false;
  p.deleted = false;
  const commits = p.commits as Payload[];
  const commit = commits[0]!;
  commit.id = after;
  commit.tree_id = fakeSha(`tree ${after}`);
  commit.added = o.added ?? [];
  commit.modified = o.modified ?? [];
  commit.removed = o.removed ?? [];
  p.head_commit = structuredClone(commit);
  obj(p.pusher).name = o.sender?.login ?? obj(p.sender).login;
  return event("push", p, o);
}

export interface PullRequestOptions extends EventOptions {
  number?: number;
  headSha?: string;
  /** Head branch name. */
  headRef?: string;
  baseRef?: string;
  baseSha?: string;
  /** PR author login (default: the sender). */
  author?: string;
  authorType?: "User" | "Bot";
  /** For `closed`: merged (default true) or closed without merging. */
  merged?: boolean;
  mergeCommitSha?: string;
  draft?: boolean;
  /** The head lives in a fork (another repository, another owner). */
  fork?: boolean;
  /** The pull request's labels; with `labeled`/`unlabeled` the event's label is the first one (or `label`). */
  labels?: string[];
  label?: string;
}

/** A pull_request event. `closed` is a merge unless `merged: false`. */
export function pullRequestEvent(
  action: "opened" | "synchronize" | "reopened" | "closed" | "labeled" | "unlabeled",
  o: PullRequestOptions = {},
): EmitterWebhookEvent<"pull_request"> {
  const p = patch(
    example("pull_request", action, (e) => e.installation !== undefined),
    o,
  );
  const number = o.number ?? 7;
  const headSha = o.headSha ?? fakeSha(`pr ${number} head`);
  const pr = obj(p.pull_request);
  p.number = number;
  pr.number = number;
  pr.draft = o.draft ?? false;
  const head = obj(pr.head);
  head.sha = headSha;
  head.ref = o.headRef ?? `feature-${number}`;
  head.label = `${o.fork ? "outsider" : (o.owner ?? DEFAULT_OWNER)}:${head.ref}`;
  if (o.fork) {
    const fork = structuredClone(obj(head.repo));
    fork.id = Number(fork.id) + 1;
    fork.full_name = `outsider/${String(fork.name)}`;
    fork.fork = true;
    head.repo = fork;
  }
  const base = obj(pr.base);
  base.sha = o.baseSha ?? fakeSha(`pr ${number} base`);
  base.ref = o.baseRef ?? DEFAULT_BRANCH;
  const author = o.author ?? o.sender?.login;
  if (author !== undefined) obj(pr.user).login = author;
  if (o.labels !== undefined || o.label !== undefined) {
    const template = obj(p.label ?? (pr.labels as unknown[] | undefined)?.[0] ?? { name: "x" });
    const named = (name: string) => ({ ...structuredClone(template), name });
    pr.labels = (o.labels ?? []).map(named);
    if (action === "labeled" || action === "unlabeled") p.label = named(o.label ?? o.labels?.[0] ?? "");
  }
  if (o.authorType !== undefined) obj(pr.user).type = o.authorType;
  if (action === "synchronize") {
    p.before = fakeSha(`pr ${number} before ${headSha}`);
    p.after = headSha;
  }
  if (action === "closed") {
    const merged = o.merged ?? true;
    const now = "2024-05-01T12:00:00Z";
    pr.state = "closed";
    pr.closed_at = now;
    pr.merged = merged;
    pr.merged_at = merged ? now : null;
    pr.merge_commit_sha = merged ? (o.mergeCommitSha ?? fakeSha(`pr ${number} merge`)) : null;
    pr.merged_by = merged ? structuredClone(p.sender) : null;
  } else {
    pr.state = "open";
    pr.merged = false;
    pr.merged_at = null;
    pr.closed_at = null;
  }
  return event("pull_request", p, o);
}

export interface IssueCommentOptions extends EventOptions {
  body: string;
  /** The pull request (or issue) number. */
  number?: number;
  commentId?: number;
  /** Comment on a pull request (default) or on a plain issue. */
  onPullRequest?: boolean;
  /** The pull request's author (default: the example's user, who is nobody else in a test). */
  author?: string;
  action?: "created" | "edited" | "deleted";
}

/** A comment on a pull request (by default); the commenter is the sender. */
export function issueCommentEvent(o: IssueCommentOptions): EmitterWebhookEvent<"issue_comment"> {
  const action = o.action ?? "created";
  const p = patch(
    example("issue_comment", action, (e) => e.installation !== undefined),
    o,
  );
  const number = o.number ?? 7;
  const issue = obj(p.issue);
  const owner = o.owner ?? DEFAULT_OWNER;
  const repo = o.repo ?? DEFAULT_REPO;
  issue.number = number;
  if (o.author !== undefined) {
    obj(issue.user).login = o.author;
    obj(issue.user).id = userIdOf(o.author);
  }
  const htmlBase = `https://github.com/${owner}/${repo}`;
  if (o.onPullRequest ?? true) {
    issue.pull_request = {
      url: `https://api.github.com/repos/${owner}/${repo}/pulls/${number}`,
      html_url: `${htmlBase}/pull/${number}`,
      diff_url: `${htmlBase}/pull/${number}.diff`,
      patch_url: `${htmlBase}/pull/${number}.patch`,
      merged_at: null,
    };
    issue.html_url = `${htmlBase}/pull/${number}`;
  } else {
    delete issue.pull_request;
  }
  const comment = obj(p.comment);
  const commentId = o.commentId ?? 1001;
  comment.id = commentId;
  comment.body = o.body;
  comment.html_url = `${issue.html_url}#issuecomment-${commentId}`;
  const user = obj(comment.user);
  const sender = obj(p.sender);
  user.login = sender.login;
  user.type = sender.type;
  user.id = sender.id;
  return event("issue_comment", p, o);
}

export interface CheckRunOptions extends EventOptions {
  /** For `requested_action`: the button's identifier. */
  identifier?: string;
  checkRunId?: number;
  headSha?: string;
  /** The check run's name, e.g. `syncward/prod`. */
  name?: string;
  externalId?: string;
  /** The app that created the run (clicks only reach that app). */
  appId?: number;
  pullRequests?: number[];
}

/** A click on a check run's button (`requested_action`) or "Re-run" (`rerequested`). */
export function checkRunEvent(
  action: "requested_action" | "rerequested",
  o: CheckRunOptions = {},
): EmitterWebhookEvent<"check_run"> {
  const p = patch(
    example("check_run", action, (e) => e.installation !== undefined),
    o,
  );
  const run = obj(p.check_run);
  const headSha = o.headSha ?? fakeSha("check head");
  run.id = o.checkRunId ?? 5001;
  run.head_sha = headSha;
  run.name = o.name ?? "syncward/prod";
  run.external_id = o.externalId ?? "";
  run.status = "completed";
  obj(run.check_suite).head_sha = headSha;
  if (o.appId !== undefined) obj(run.app).id = o.appId;
  const owner = o.owner ?? DEFAULT_OWNER;
  const repo = o.repo ?? DEFAULT_REPO;
  run.pull_requests = (o.pullRequests ?? []).map((n) => ({
    url: `https://api.github.com/repos/${owner}/${repo}/pulls/${n}`,
    id: 900000 + n,
    number: n,
    head: {
      ref: `feature-${n}`,
      sha: headSha,
      repo: { id: 1, url: `https://api.github.com/repos/${owner}/${repo}`, name: repo },
    },
    base: {
      ref: DEFAULT_BRANCH,
      sha: fakeSha(`pr ${n} base`),
      repo: { id: 1, url: `https://api.github.com/repos/${owner}/${repo}`, name: repo },
    },
  }));
  if (action === "requested_action") p.requested_action = { identifier: o.identifier ?? "sync" };
  else delete p.requested_action;
  return event("check_run", p, o);
}

/** The test repository as GitHub lists an installation's repositories (`GET /installation/repositories`). */
export function listedRepository(): Record<string, unknown> {
  const [owner, name] = [DEFAULT_OWNER, DEFAULT_REPO];
  return {
    ...{ id: repoIdOf(`${owner}/${name}`), name, full_name: `${owner}/${name}`, owner: { login: owner } },
    ...{ html_url: `https://github.com/${owner}/${name}`, default_branch: DEFAULT_BRANCH, archived: false },
  };
}

/** An `installation` event of GitHub's example, for installation `installationId`. */
export function installationEvent(
  action: "created" | "deleted" | "suspend" | "unsuspend" | "new_permissions_accepted",
  o: EventOptions = {},
): EmitterWebhookEvent<"installation"> {
  const p = example("installation", action);
  const installation = obj(p.installation);
  installation.id = o.installationId ?? DEFAULT_INSTALLATION_ID;
  obj(installation.account).login = o.owner ?? DEFAULT_OWNER;
  return event("installation", p, o);
}

/** Repositories (`owner/name`) added to or removed from an installation, from GitHub's example. */
export function installationRepositoriesEvent(
  action: "added" | "removed",
  repos: string[],
  o: EventOptions = {},
): EmitterWebhookEvent<"installation_repositories"> {
  const p = example("installation_repositories", action);
  const template = obj((p.repositories_added as unknown[])[0] ?? (p.repositories_removed as unknown[])[0]);
  const entries = repos.map((fullName) => ({
    ...template,
    id: repoIdOf(fullName),
    name: fullName.split("/")[1],
    full_name: fullName,
  }));
  p.repositories_added = action === "added" ? entries : [];
  p.repositories_removed = action === "removed" ? entries : [];
  obj(p.installation).id = o.installationId ?? DEFAULT_INSTALLATION_ID;
  return event("installation_repositories", p, o);
}

/**
 * A `repository` event. GitHub's examples have no archived, unarchived or deleted ones: those
 * start from the `edited` example, whose repository object has the same shape.
 */
export function repositoryEvent(
  action: "archived" | "unarchived" | "deleted" | "renamed" | "transferred",
  o: EventOptions & { from?: string } = {},
): EmitterWebhookEvent<"repository"> {
  const renamed = action === "renamed" || action === "transferred";
  // GitHub keeps a repository's id through a rename or a transfer: the old name's.
  const before =
    action === "renamed"
      ? `${o.owner ?? DEFAULT_OWNER}/${o.from ?? "old-name"}`
      : action === "transferred"
        ? `${o.from ?? "old-owner"}/${o.repo ?? DEFAULT_REPO}`
        : undefined;
  const p = patch(example("repository", renamed ? "renamed" : "edited"), {
    ...o,
    repoId: o.repoId ?? (before ? repoIdOf(before) : undefined),
  });
  p.action = action;
  delete p.changes;
  // `from`: the old name (renamed) or the old owner's login (transferred), as GitHub sends them.
  if (action === "renamed") p.changes = { repository: { name: { from: o.from ?? "old-name" } } };
  if (action === "transferred")
    p.changes = { owner: { from: { user: { login: o.from ?? "old-owner", id: 1, type: "User" } } } };
  if (action === "archived") obj(p.repository).archived = true;
  return event("repository", p, o);
}

/** "Re-run all checks" of a commit (`check_suite.rerequested`), listing `pullRequests` (none for a fork). */
export function checkSuiteRerequestedEvent(
  o: EventOptions & { headSha?: string; pullRequests?: number[] } = {},
): EmitterWebhookEvent<"check_suite"> {
  // GitHub's example was re-requested by a bot; a person clicks "Re-run all checks".
  const p = patch(
    example("check_suite", "rerequested", (e) => e.installation !== undefined),
    { ...o, sender: { login: "alice", type: "User", ...o.sender } },
  );
  const suite = obj(p.check_suite);
  const headSha = o.headSha ?? fakeSha("suite head");
  suite.head_sha = headSha;
  const template = obj((suite.pull_requests as unknown[])[0]);
  suite.pull_requests = (o.pullRequests ?? []).map((number) => ({
    ...template,
    number,
    head: { ...obj(template.head), sha: headSha },
    base: { ...obj(template.base), ref: DEFAULT_BRANCH },
  }));
  return event("check_suite", p, o);
}

/**
 * A check suite of another app finished on `headSha` of `branch` (`check_suite.completed`): by
 * default GitHub Actions' suite on the default branch; `app` names the app whose suite it is.
 */
export function checkSuiteCompletedEvent(
  o: EventOptions & {
    headSha?: string;
    branch?: string | null;
    conclusion?: string;
    app?: { id: number; slug: string };
  } = {},
): EmitterWebhookEvent<"check_suite"> {
  const p = patch(
    example("check_suite", "completed", (e) => obj(obj(e.check_suite).app).slug === "github-actions"),
    o,
  );
  const suite = obj(p.check_suite);
  suite.head_sha = o.headSha ?? fakeSha("suite head");
  suite.head_branch = o.branch === undefined ? DEFAULT_BRANCH : o.branch;
  suite.conclusion = o.conclusion ?? "success";
  if (o.app) Object.assign(obj(suite.app), o.app);
  return event("check_suite", p, o);
}

/**
 * A commit status (`status`) of `context` on `sha`, which heads `branch` (GitHub lists the branches
 * that contain the commit, each with its head).
 */
export function statusEvent(
  o: EventOptions & { sha: string; context?: string; state?: string; branch?: string },
): EmitterWebhookEvent<"status"> {
  const p = patch(
    example("status", undefined, (e) => e.installation !== undefined),
    o,
  );
  p.sha = o.sha;
  p.context = o.context ?? "ci";
  p.state = o.state ?? "success";
  const [template] = p.branches as Payload[];
  p.branches = [
    { ...template, name: o.branch ?? DEFAULT_BRANCH, commit: { ...obj(obj(template).commit), sha: o.sha } },
  ];
  return event("status", p, o);
}
