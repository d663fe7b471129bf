// GitHub's answers about what an approval would deploy: the compare API's commits, the pull
// requests that carry each commit, and the full pull requests that name who merged them.
import { REPO_PATH } from "./app.ts";
import { GITHUB_API, type GitHubMock } from "./github.ts";
import { userIdOf } from "./webhooks.ts";

export interface FakeCommit {
  sha: string;
  /** A login, or null for an address no GitHub account claims (`email` then says which). */
  author: string | null;
  committer?: string | null;
  email?: string;
  message?: string;
}

export interface FakePull {
  number: number;
  author: string;
  mergedBy?: string;
  /** Commits of the range it carries. */
  commits: string[];
  head?: string;
  mergeCommit?: string;
  fork?: boolean;
}

const BASE_REPO_ID = 1296269;

export const ghUser = (login: string) => ({
  login,
  id: userIdOf(login),
  type: "User",
});

/** GET /users/{login}: the GitHub account that has `login` now (syncward pins a listed approver's login to it). */
export function mockAccount(mock: GitHubMock, login: string, id = userIdOf(login)): void {
  mock
    .scope(GITHUB_API)
    .get(`/users/${login}`)
    .reply(200, { ...ghUser(login), id });
}

export function apiCommit(c: FakeCommit) {
  const committer = c.committer === undefined ? "web-flow" : c.committer;
  const email = c.email ?? `${c.author ?? "someone"}@example.com`;
  return {
    sha: c.sha,
    url: `https://api.github.com${REPO_PATH}/commits/${c.sha}`,
    commit: {
      message: c.message ?? "change",
      author: { name: c.author ?? "someone", email, date: "2024-05-01T12:00:00Z" },
      committer: { name: committer ?? "someone", email: committer ? `${committer}@example.com` : email },
    },
    author: c.author === null ? null : ghUser(c.author),
    committer: committer === null ? null : ghUser(committer),
    parents: [],
  };
}

/** One entry of GET /repos/{o}/{r}/activity: `actor` moved `branch` to `after`. */
export function apiActivity(after: string, actor: string, branch: string, kind = "push", i = 0) {
  return {
    id: 100 + i,
    node_id: `A_${i}`,
    before: "0".repeat(40),
    after,
    ref: `refs/heads/${branch}`,
    timestamp: "2024-05-01T12:00:00Z",
    activity_type: kind,
    actor: ghUser(actor),
  };
}

/** The full pull request, as `GET /pulls/{n}` answers it. */
export function apiPull(p: FakePull) {
  const merged = p.mergedBy !== undefined;
  return {
    number: p.number,
    title: `PR ${p.number}`,
    state: merged ? "closed" : "open",
    merged,
    merged_at: merged ? "2024-05-01T12:00:00Z" : null,
    merge_commit_sha: p.mergeCommit ?? null,
    user: ghUser(p.author),
    merged_by: merged ? ghUser(p.mergedBy as string) : null,
    head: {
      sha: p.head ?? p.commits.at(-1),
      ref: `feature-${p.number}`,
      repo: { id: p.fork ? 4242 : BASE_REPO_ID },
    },
    base: { ref: "main", repo: { id: BASE_REPO_ID } },
  };
}

/**
 * The range `base...head` holds `commits`, carried by `pulls`: the compare API (or the head
 * commit alone without a base), each commit's pull requests, each merged one in full.
 */
export function mockRange(
  mock: GitHubMock,
  o: {
    base?: string;
    head: string;
    commits: FakeCommit[];
    pulls: FakePull[];
    /** Who moved main to which commit (repository activity), newest first; default none listed. */
    pushes?: Array<{ after: string; actor: string; kind?: string }> | "forbidden";
  },
): void {
  // A scope of its own: a test may have made `mock.api` persist, which would hold for these too.
  const api = mock.scope(GITHUB_API);
  if (o.base === undefined) {
    api
      .get(`${REPO_PATH}/commits`)
      .query({ sha: o.head, per_page: "1" })
      .reply(200, [apiCommit(o.commits[0] as FakeCommit)]);
  } else {
    api
      .get(`${REPO_PATH}/compare/${o.base}...${o.head}`)
      .query({ per_page: "100", page: "1" })
      .reply(200, { status: "ahead", total_commits: o.commits.length, commits: o.commits.map(apiCommit) });
  }
  const activity = api
    .get(`${REPO_PATH}/activity`)
    .query({ ref: "refs/heads/main", direction: "desc", per_page: "100" });
  if (o.pushes === "forbidden") activity.reply(403, { message: "Resource not accessible by integration" });
  else
    activity.reply(
      200,
      (o.pushes ?? []).map((p, i) => apiActivity(p.after, p.actor, "main", p.kind, i)),
    );
  const shown = o.base === undefined ? o.commits.slice(0, 1) : o.commits;
  for (const c of shown) {
    const carrying = o.pulls.filter((p) => p.commits.includes(c.sha));
    api
      .get(`${REPO_PATH}/commits/${c.sha}/pulls`)
      .query(true)
      .reply(
        200,
        carrying.map((p) => ({ ...apiPull(p), merged_by: undefined })),
      );
  }
  for (const p of o.pulls.filter(
    (p) => p.mergedBy !== undefined && p.commits.some((s) => shown.some((c) => c.sha === s)),
  ))
    api.get(`${REPO_PATH}/pulls/${p.number}`).reply(200, apiPull(p));
}
