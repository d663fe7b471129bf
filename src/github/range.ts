// What an approval would deploy, read from GitHub: the commits from the last synced revision to
// the pending one (the compare API, every page) and the pull requests that carry them (with who
// merged each, which only the full pull request tells). A first deployment has no last revision:
// the pending commit alone, with its pull requests, is the range. contributors.ts decides who
// contributed.

import type { GitHubUser, Range, RangeCommit, RangePull, RangePush } from "./contributors.ts";
import { isRateLimited, statusOf } from "./github-errors.ts";
import type { Octokit, RepoRef } from "./octokit.ts";

/** Most commits read: a longer range cannot be told apart person by person, and is refused. */
export const MAX_RANGE_COMMITS = 500;
const PER_PAGE = 100;
/** Pull-request lookups in flight at once. */
const CONCURRENCY = 6;

export class RangeTooLong extends Error {}

interface ApiCommit {
  sha: string;
  author: { id: number; login: string; type?: string } | null | Record<string, never>;
  committer: { id: number; login: string; type?: string } | null | Record<string, never>;
  commit: {
    message: string;
    author: { email?: string } | null;
    committer: { email?: string } | null;
  };
}

function user(u: ApiCommit["author"]): GitHubUser | null {
  if (!u || !("id" in u) || typeof u.id !== "number") return null;
  return { id: u.id, login: u.login, ...(u.type ? { type: u.type } : {}) };
}

function toCommit(c: ApiCommit): RangeCommit {
  return {
    sha: c.sha,
    author: user(c.author),
    committer: user(c.committer),
    ...(c.commit.author?.email ? { authorEmail: c.commit.author.email } : {}),
    ...(c.commit.committer?.email ? { committerEmail: c.commit.committer.email } : {}),
    title: c.commit.message.split("\n", 1)[0] ?? "",
  };
}

/** The commits in `base..head` (every page), or the head commit alone without a base. */
async function rangeCommits(gh: Octokit, repo: RepoRef, base: string | undefined, head: string) {
  if (base === undefined || base === head) {
    // The branch's history from `head`, first entry only: `head` itself, without its file list.
    const { data } = await gh.rest.repos.listCommits({ ...repo, sha: head, per_page: 1 });
    const [commit] = data as unknown as ApiCommit[];
    if (commit?.sha !== head) throw new Error(`GitHub does not list commit ${head.slice(0, 7)}`);
    return [toCommit(commit)];
  }
  const commits: RangeCommit[] = [];
  for (let page = 1; ; page++) {
    const { data } = await gh.rest.repos.compareCommitsWithBasehead({
      ...repo,
      basehead: `${base}...${head}`,
      per_page: PER_PAGE,
      page,
    });
    if (data.total_commits > MAX_RANGE_COMMITS)
      throw new RangeTooLong(
        `${base.slice(0, 7)}..${head.slice(0, 7)} holds ${data.total_commits} commits; syncward reads at most ${MAX_RANGE_COMMITS} to tell who contributed, so nobody can approve it: deploy a shorter step (\`syncward app sync\` by an operator, or a revert)`,
      );
    commits.push(...(data.commits as unknown as ApiCommit[]).map(toCommit));
    if (data.commits.length < PER_PAGE || commits.length >= data.total_commits) break;
  }
  // Going back (the pending revision is behind the deployed one) lists no commit: what would be
  // deployed then is the pending commit itself.
  if (commits.length === 0) return rangeCommits(gh, repo, undefined, head);
  return commits;
}

/** Runs `work` on each item, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}

/** Most pages of repository activity read back to the last synced revision. */
const MAX_ACTIVITY_PAGES = 3;

/**
 * Who moved `branch` to each revision since `base`: the pushers, which commits do not name (a
 * commit's author and committer are whatever its maker wrote). Newest first, until the push that
 * made `base` (or a few pages). GitHub's status (403, 404) when it does not show the activity to syncward.
 */
async function branchPushes(
  gh: Octokit,
  repo: RepoRef,
  branch: string,
  base: string | undefined,
): Promise<RangePush[] | number> {
  const pushes: RangePush[] = [];
  let pages = 0;
  try {
    await gh.paginate(
      gh.rest.repos.listActivities,
      { ...repo, ref: `refs/heads/${branch}`, direction: "desc", per_page: 100 },
      (response, done) => {
        for (const a of response.data)
          pushes.push({
            after: a.after,
            kind: a.activity_type,
            actor: a.actor ? { id: a.actor.id, login: a.actor.login } : null,
          });
        if (++pages >= MAX_ACTIVITY_PAGES || response.data.some((a) => a.after === base)) done();
        return [];
      },
    );
  } catch (err) {
    const status = statusOf(err);
    if (isRateLimited(err) || (status !== 403 && status !== 404)) throw err;
    return status;
  }
  return pushes;
}

/** The commits from `base` to `head` on `branch`, the pull requests that carry them and who pushed them. */
export async function fetchRange(
  gh: Octokit,
  repo: RepoRef,
  base: string | undefined,
  head: string,
  branch?: string,
): Promise<Range> {
  const commits = await rangeCommits(gh, repo, base, head);
  const activity = branch === undefined ? undefined : await branchPushes(gh, repo, branch, base);
  const pushes = typeof activity === "number" ? undefined : activity;
  const pulls = new Map<number, RangePull & { merged: boolean }>();
  await eachLimited(commits, CONCURRENCY, async (c) => {
    const list = await gh.paginate(gh.rest.repos.listPullRequestsAssociatedWithCommit, {
      ...repo,
      commit_sha: c.sha,
      per_page: 100,
    });
    for (const p of list) {
      const known = pulls.get(p.number);
      if (known) known.commits.push(c.sha);
      else
        pulls.set(p.number, {
          number: p.number,
          title: p.title,
          user: p.user ? { id: p.user.id, login: p.user.login } : null,
          mergedBy: null,
          merged: Boolean(p.merged_at),
          commits: [c.sha],
        });
    }
  });
  // Only the full pull request names who merged it.
  await eachLimited(
    [...pulls.values()].filter((p) => p.merged),
    CONCURRENCY,
    async (p) => {
      const { data } = await gh.rest.pulls.get({ ...repo, pull_number: p.number });
      p.mergedBy = data.merged_by ? { id: data.merged_by.id, login: data.merged_by.login } : null;
    },
  );
  return {
    ...(base === undefined ? {} : { base }),
    head,
    commits,
    ...(pushes === undefined ? {} : { pushes }),
    ...(typeof activity === "number" ? { activityStatus: activity } : {}),
    pulls: [...pulls.values()].sort((a, b) => a.number - b.number).map(({ merged: _merged, ...p }) => p),
  };
}
