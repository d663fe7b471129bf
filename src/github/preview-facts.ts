// What previewDecision needs to know of a pull request, read from GitHub: whether its head is a
// branch of the repository itself, and the permission of its author and of everyone who could
// have put code on it: the authors and committers of its commits (names anyone can write into a
// commit), and who really pushed, from the push being handled (its sender) and from GitHub's
// activity of the branch (every push, branch creation or merge whose commit is in the head's
// history). The head's commits are those of the exact head being handled that are not on the
// default branch, never the pull request's list (which depends on its base, which a writer can
// move, and stops at 250). What cannot be read in full is said (`unreadable`): the preview then
// fails closed. Nothing is remembered between events: a commit pushed by someone without the
// permission counts for as long as it is in the head's history, whoever pushes after it.

import { short } from "../util/short-sha.ts";
import { permissionOf } from "./authorize.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import type { PreviewPullFacts } from "./preview-eligibility.ts";

/** A pull request as previews see it, from a webhook payload or `GET /pulls/{n}`. */
export interface PullView {
  number: number;
  state: string;
  head: { ref: string; sha: string; repoId?: number };
  baseRepoId: number;
  author: string;
  labels: string[];
  /** Closed by a merge (from a webhook payload; false when not known). */
  merged?: boolean;
}

interface PullLike {
  number: number;
  state: string;
  head: { ref: string; sha: string; repo?: { id: number } | null };
  base: { repo: { id: number } };
  user?: { login: string } | null;
  labels?: Array<{ name?: string } | string>;
  merged?: boolean | null;
}

export function pullViewOf(pr: PullLike): PullView {
  return {
    number: pr.number,
    state: pr.state,
    head: { ref: pr.head.ref, sha: pr.head.sha, repoId: pr.head.repo?.id },
    baseRepoId: pr.base.repo.id,
    author: pr.user?.login ?? "ghost",
    labels: (pr.labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? ""))),
    merged: pr.merged === true,
  };
}

export async function readPull(gh: Octokit, repo: RepoRef, number: number): Promise<PullView> {
  const { data } = await gh.rest.pulls.get({ ...repo, pull_number: number });
  return pullViewOf(data as unknown as PullLike);
}

/** Kinds of branch activity that put commits on it, with who did it (for a merge: who merged). */
const PUTS_COMMITS = new Set(["push", "force_push", "branch_creation", "pr_merge", "merge_queue_merge"]);
/** Pages of the branch's activity read (100 each): a pull request's branch has far fewer changes. */
export const ACTIVITY_PAGES = 5;
/** Most commits of a head read (pages of 100): a head with more is not told apart pusher by pusher. */
export const MAX_HEAD_COMMITS = 500;
const PER_PAGE = 100;

interface HeadCommit {
  sha: string;
  author?: { login?: string } | null;
  committer?: { login?: string } | null;
}

/**
 * The facts of `pr` at the head being handled (`pr.head.sha`: what the preview would deploy,
 * whatever the pull request shows by the time this runs). A fork's are not looked further into:
 * it never gets a preview, whoever wrote it. The web-flow committer (GitHub's own, for web edits
 * and merges) is no one who pushed. `sender`: who pushed the head being handled (a `synchronize`
 * webhook's sender). `trusted`: the repository's default branch; the head's commits are the ones
 * not on it, so retargeting the pull request's base (to a branch at a commit that was pushed
 * without the permission, say) hides none of them.
 */
export async function previewFactsOf(
  gh: Octokit,
  repo: RepoRef,
  pr: PullView,
  live: boolean,
  o: { trusted: string; sender?: string },
): Promise<PreviewPullFacts> {
  const sameRepository = pr.head.repoId !== undefined && pr.head.repoId === pr.baseRepoId;
  const base = { sameRepository, author: pr.author, labels: pr.labels, live };
  if (!sameRepository) return { ...base, authorPermission: "none", pushers: [] };
  const permissions = new Map<string, Awaited<ReturnType<typeof permissionOf>>>();
  const of = async (login: string) => {
    const known = permissions.get(login);
    if (known) return known;
    const found = await permissionOf(gh, repo, login);
    permissions.set(login, found);
    return found;
  };
  const head = await headCommits(gh, repo, o.trusted, pr.head.sha);
  const logins = new Set<string>();
  for (const c of head.commits) {
    for (const who of [c.author?.login, c.committer?.login]) if (who && who !== "web-flow") logins.add(who);
  }
  if (o.sender) logins.add(o.sender);
  const activity = await pushersOf(gh, repo, pr.head.ref, new Set(head.commits.map((c) => c.sha)));
  for (const who of activity.pushers) logins.add(who);
  const pushers = [];
  for (const login of logins) pushers.push({ login, permission: await of(login) });
  const unreadable = head.unreadable ?? activity.unreadable;
  return {
    ...base,
    authorPermission: await of(pr.author),
    pushers,
    ...(unreadable === undefined ? {} : { unreadable }),
  };
}

/**
 * The commits of `head` that are not on `trusted` (the compare API, every page), or what of them
 * could not be read: more than MAX_HEAD_COMMITS, or fewer listed than GitHub counts.
 */
async function headCommits(
  gh: Octokit,
  repo: RepoRef,
  trusted: string,
  head: string,
): Promise<{ commits: HeadCommit[]; unreadable?: string }> {
  const commits: HeadCommit[] = [];
  for (let page = 1; ; page++) {
    const { data } = await gh.rest.repos.compareCommitsWithBasehead({
      ...repo,
      basehead: `${trusted}...${head}`,
      per_page: PER_PAGE,
      page,
    });
    const total = data.total_commits;
    if (total > MAX_HEAD_COMMITS)
      return {
        commits,
        unreadable: `${short(head)} has ${total} commits that are not on ${trusted}, and syncward reads at most ${MAX_HEAD_COMMITS} to tell who pushed them`,
      };
    commits.push(...(data.commits as HeadCommit[]));
    if (commits.length >= total) return { commits };
    if (data.commits.length < PER_PAGE)
      return {
        commits,
        unreadable: `GitHub listed ${commits.length} of the ${total} commits of ${short(head)} that are not on ${trusted}`,
      };
  }
}

/**
 * Who pushed (created the branch at, or merged into it) a commit of `history`, from GitHub's
 * activity of the branch, newest first: every change of the branch, an earlier branch of that name
 * included (nothing launders a push). Unreadable when the pages read end before the list does: an
 * older push could have brought one of those commits.
 */
async function pushersOf(
  gh: Octokit,
  repo: RepoRef,
  branch: string,
  history: Set<string>,
): Promise<{ pushers: string[]; unreadable?: string }> {
  const found = new Set<string>();
  let page = 0;
  for await (const { data, headers } of gh.paginate.iterator(gh.rest.repos.listActivities, {
    ...repo,
    ref: `refs/heads/${branch}`,
    direction: "desc",
    per_page: PER_PAGE,
  })) {
    for (const a of data)
      if (PUTS_COMMITS.has(a.activity_type) && history.has(a.after) && a.actor?.login)
        found.add(a.actor.login);
    if (++page >= ACTIVITY_PAGES) {
      if (/rel="next"/.test(headers.link ?? ""))
        return {
          pushers: [...found],
          unreadable: `GitHub's activity of ${branch} has more than ${ACTIVITY_PAGES * PER_PAGE} changes, and syncward reads that many to find who pushed`,
        };
      break;
    }
  }
  return { pushers: [...found] };
}
