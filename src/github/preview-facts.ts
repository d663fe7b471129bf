// What previewDecision needs to know of a pull request, read from GitHub: whether its head is a
// branch of the repository itself, and the permission of its author and of everyone whose
// commits are on it (authors and committers: whoever could have put code there).

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
}

interface PullLike {
  number: number;
  state: string;
  head: { ref: string; sha: string; repo?: { id: number } | null };
  base: { repo: { id: number } };
  user?: { login: string } | null;
  labels?: Array<{ name?: string } | string>;
}

export function pullViewOf(pr: PullLike): PullView {
  return {
    number: pr.number,
    state: pr.state,
    head: { ref: pr.head.ref, sha: pr.head.sha, repoId: pr.head.repo?.id },
    baseRepoId: pr.base.repo.id,
    author: pr.user?.login ?? "ghost",
    labels: (pr.labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? ""))),
  };
}

export async function readPull(gh: Octokit, repo: RepoRef, number: number): Promise<PullView> {
  const { data } = await gh.rest.pulls.get({ ...repo, pull_number: number });
  return pullViewOf(data as unknown as PullLike);
}

/**
 * The facts of `pr`. A fork's are not looked further into: it never gets a preview, whoever wrote
 * it. The web-flow committer (GitHub's own, for web edits and merges) is no one who pushed.
 */
export async function previewFactsOf(
  gh: Octokit,
  repo: RepoRef,
  pr: PullView,
  live: boolean,
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
  const pushers = [];
  for (const login of logins) pushers.push({ login, permission: await of(login) });
  return { ...base, authorPermission: await of(pr.author), pushers };
}
