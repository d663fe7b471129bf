// What an approval would deploy, read from GitHub: the commits from the last synced revision to
// the pending one (the compare API, every page) and the pull requests that carry them (with who
// merged each, which only the full pull request tells). A first deployment has no last revision:
// the pending commit alone, with its pull requests, is the range. contributors.ts decides who
// contributed. For each pull request it also reads what main's commits do not show: the pull
// request's own commits (a squash merge leaves only its author's name on main) and who pushed to
// its branch. Whatever of this cannot be read in full is named in `unreadable`: an approval then
// fails closed.

import {
  coAuthorsOf,
  type GitHubUser,
  type Range,
  type RangeCommit,
  type RangePull,
  type RangePush,
} from "./contributors.ts";
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
  parents?: Array<{ sha: string }>;
}

function user(u: { id?: number; login?: string; type?: string } | null | undefined): GitHubUser | null {
  if (!u || typeof u.id !== "number" || typeof u.login !== "string") return null;
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
    ...withCoAuthors(c.commit.message),
  };
}

function withCoAuthors(message: string): Pick<RangeCommit, "coAuthors"> {
  const coAuthors = coAuthorsOf(message);
  return coAuthors.length > 0 ? { coAuthors } : {};
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

/** Most pages of repository activity read for one branch. */
const MAX_ACTIVITY_PAGES = 3;

interface Activity {
  pushes: RangePush[];
  /** Every page was read (the list ended before the page limit). */
  ended: boolean;
}

/**
 * Who moved `ref` (in `repo`) to each revision: the pushers, which commits do not name (a commit's
 * author and committer are whatever its maker wrote). Newest first, until `enough` says the list
 * holds what is needed, the list ends, or a few pages. GitHub's status (403, 404) when it does not
 * show the activity to syncward.
 */
async function activityOf(
  gh: Octokit,
  repo: RepoRef,
  ref: string,
  enough: (pushes: RangePush[]) => boolean,
): Promise<Activity | number> {
  const pushes: RangePush[] = [];
  let pages = 0;
  let ended = true;
  try {
    for await (const response of gh.paginate.iterator(gh.rest.repos.listActivities, {
      ...repo,
      ref,
      direction: "desc",
      per_page: 100,
    })) {
      for (const a of response.data)
        pushes.push({ after: a.after, before: a.before, kind: a.activity_type, actor: user(a.actor) });
      if (enough(pushes)) break;
      if (++pages >= MAX_ACTIVITY_PAGES) {
        ended = !/rel="next"/.test(response.headers.link ?? "");
        break;
      }
    }
  } catch (err) {
    const status = statusOf(err);
    if (isRateLimited(err) || (status !== 403 && status !== 404)) throw err;
    return status;
  }
  return { pushes, ended };
}

/**
 * Who moved the tracked `branch` since `base`. Complete only when the list shows the push that
 * made `head` and reaches `base` (when there is one): a lagging or cut-short list could leave the
 * pusher out, so it counts as unreadable (a string saying why).
 */
async function branchPushes(
  gh: Octokit,
  repo: RepoRef,
  branch: string,
  base: string | undefined,
  head: string,
): Promise<RangePush[] | number | string> {
  const hasHead = (p: RangePush[]) => p.some((a) => a.after === head);
  const reachesBase = (p: RangePush[]) =>
    base === undefined || p.some((a) => a.after === base || a.before === base);
  const read = await activityOf(gh, repo, `refs/heads/${branch}`, (p) => hasHead(p) && reachesBase(p));
  if (typeof read === "number") return read;
  if (!hasHead(read.pushes)) return `it does not show the push of ${head.slice(0, 7)} yet`;
  if (!reachesBase(read.pushes))
    return `it does not reach the last synced revision ${(base ?? "").slice(0, 7)} within ${MAX_ACTIVITY_PAGES} pages`;
  return read.pushes;
}

/** Most commits GitHub lists for one pull request: a longer list is cut short. */
const MAX_PULL_COMMITS = 250;

interface ApiPullHead {
  ref: string;
  sha: string;
  repo: { name: string; owner: { login: string } } | null;
}

/**
 * What a pull request's merge does not show on the tracked branch: its own commits (with their
 * co-authors) and who pushed to its branch (from its head repository's activity, a fork's
 * included). What cannot be read in full is named in `unreadable`.
 */
async function pullInside(
  gh: Octokit,
  repo: RepoRef,
  pull: RangePull,
  head: ApiPullHead,
  unreadable: string[],
): Promise<void> {
  const commits = (await gh.paginate(gh.rest.pulls.listCommits, {
    ...repo,
    pull_number: pull.number,
    per_page: 100,
  })) as unknown as ApiCommit[];
  if (commits.length >= MAX_PULL_COMMITS)
    unreadable.push(`the commits of #${pull.number} (GitHub lists at most ${MAX_PULL_COMMITS})`);
  pull.ownCommits = commits.map(toCommit);
  if (!head.repo) {
    unreadable.push(`who pushed to #${pull.number}'s branch (its repository was deleted)`);
    return;
  }
  const where = { owner: head.repo.owner.login, repo: head.repo.name };
  const hasHead = (p: RangePush[]) => p.some((a) => a.after === head.sha);
  // Where the branch stood before the pull request's first commit (its commits' parents outside
  // it): a long-lived head branch (a promotion from main) need not be read back to its creation.
  const own = new Set(commits.map((c) => c.sha));
  const before = new Set(
    commits.flatMap((c) => (c.parents ?? []).map((p) => p.sha)).filter((sha) => !own.has(sha)),
  );
  // Back far enough: the branch's creation, or where it stood before the pull request, older than
  // the push of its head (a branch deleted and made again later is another branch).
  const created = (p: RangePush[]) => {
    const at = p.findIndex((a) => a.after === head.sha);
    return (
      at >= 0 &&
      p
        .slice(at)
        .some((a) => a.kind === "branch_creation" || before.has(a.after) || before.has(a.before ?? ""))
    );
  };
  const read = await activityOf(gh, where, `refs/heads/${head.ref}`, (p) => hasHead(p) && created(p));
  const branch = `${where.owner}/${where.repo}:${head.ref}`;
  if (typeof read === "number")
    unreadable.push(`who pushed to #${pull.number}'s branch ${branch} (repository activity: ${read})`);
  else if (!hasHead(read.pushes) || !(read.ended || created(read.pushes)))
    unreadable.push(
      `who pushed to #${pull.number}'s branch ${branch} (its repository activity ${hasHead(read.pushes) ? `is longer than ${MAX_ACTIVITY_PAGES} pages` : `does not show the push of ${head.sha.slice(0, 7)}`})`,
    );
  else pull.branchPushes = read.pushes;
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
  const activity = branch === undefined ? undefined : await branchPushes(gh, repo, branch, base, head);
  const pushes = Array.isArray(activity) ? activity : undefined;
  const pulls = new Map<number, RangePull & { merged: boolean; head: ApiPullHead }>();
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
          user: user(p.user),
          mergedBy: null,
          merged: Boolean(p.merged_at),
          head: p.head as ApiPullHead,
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
      p.mergedBy = user(data.merged_by);
    },
  );
  const unreadable: string[] = [];
  await eachLimited([...pulls.values()], CONCURRENCY, (p) => pullInside(gh, repo, p, p.head, unreadable));
  return {
    ...(base === undefined ? {} : { base }),
    head,
    commits,
    ...(pushes === undefined ? {} : { pushes }),
    ...(activity === undefined || Array.isArray(activity) ? {} : { activityStatus: activity }),
    ...(unreadable.length > 0 ? { unreadable: unreadable.sort() } : {}),
    pulls: [...pulls.values()]
      .sort((a, b) => a.number - b.number)
      .map(({ merged: _merged, head: _head, ...p }) => p),
  };
}
