// What previewDecision needs to know of a pull request, read from GitHub: whether its head is a
// branch of the repository itself, and the permission of its author and of everyone who could
// have put code on it: the authors and committers of its commits (names anyone can write into a
// commit), and who really pushed, from the push being handled (its sender) and from GitHub's
// activity of the branch (every push whose commit is still in the head's history). Nothing is
// remembered between events: a commit pushed by someone without the permission counts for as
// long as it is in the head's history, whoever pushes after it.

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

/** Kinds of branch activity that put commits on it, with who did it. */
const PUTS_COMMITS = new Set(["push", "force_push", "branch_creation"]);
/** Pages of the branch's activity read (100 each): a pull request's branch has far fewer pushes. */
const ACTIVITY_PAGES = 5;

/**
 * The facts of `pr`. A fork's are not looked further into: it never gets a preview, whoever wrote
 * it. The web-flow committer (GitHub's own, for web edits and merges) is no one who pushed.
 * `sender`: who pushed the head being handled (a `synchronize` webhook's sender).
 */
export async function previewFactsOf(
  gh: Octokit,
  repo: RepoRef,
  pr: PullView,
  live: boolean,
  sender?: string,
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
  const commits = await gh.paginate(gh.rest.pulls.listCommits, {
    ...repo,
    pull_number: pr.number,
    per_page: 100,
  });
  const logins = new Set<string>();
  for (const c of commits) {
    for (const who of [c.author?.login, c.committer?.login]) if (who && who !== "web-flow") logins.add(who);
  }
  if (sender) logins.add(sender);
  for (const who of await pushersOf(gh, repo, pr.head.ref, new Set(commits.map((c) => c.sha))))
    logins.add(who);
  const pushers = [];
  for (const login of logins) pushers.push({ login, permission: await of(login) });
  return { ...base, authorPermission: await of(pr.author), pushers };
}

/** Who pushed (or created the branch at) a commit that is in `history`, from GitHub's branch activity. */
async function pushersOf(
  gh: Octokit,
  repo: RepoRef,
  branch: string,
  history: Set<string>,
): Promise<string[]> {
  const found = new Set<string>();
  let page = 0;
  for await (const { data } of gh.paginate.iterator(gh.rest.repos.listActivities, {
    ...repo,
    ref: `refs/heads/${branch}`,
    per_page: 100,
  })) {
    for (const a of data)
      if (PUTS_COMMITS.has(a.activity_type) && history.has(a.after) && a.actor?.login)
        found.add(a.actor.login);
    if (++page >= ACTIVITY_PAGES) break;
  }
  return [...found];
}
