// GitHub's answers about what an approval would deploy: the compare API's commits, the pull
// requests that carry each commit, the full pull requests that name who merged them, each pull
// request's own commits and who pushed to its branch, and who moved the tracked branch.
import { REPO_PATH } from "./app.ts";
import { GITHUB_API, type GitHubMock } from "./github.ts";
import { DEFAULT_OWNER, DEFAULT_REPO, fakeSha, userIdOf } from "./webhooks.ts";

export interface FakeCommit {
  sha: string;
  /** A login, or null for an address no GitHub account claims (`email` then says which). */
  author: string | null;
  committer?: string | null;
  email?: string;
  message?: string;
  parents?: string[];
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
  /** Its own commits (GET /pulls/{n}/commits); default one commit by its author. */
  own?: FakeCommit[];
  /** Who moved its branch, newest first; default its author created it and pushed its head. */
  branch?: FakePush[] | "forbidden";
  /** Where its branch stood before the oldest listed push (default: a creation, or zeros). */
  branchFrom?: string;
  /** Its branch's activity has older pages (which syncward should not need). */
  branchMore?: boolean;
}

/** One entry of the repository activity: who moved a branch to `after`. */
export interface FakePush {
  after: string;
  actor: string;
  kind?: string;
}

const BASE_REPO_ID = 1296269;

export const ghUser = (login: string) => ({
  login,
  id: userIdOf(login),
  type: login.endsWith("[bot]") ? "Bot" : "User",
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
    parents: (c.parents ?? []).map((sha) => ({
      sha,
      url: `https://api.github.com${REPO_PATH}/commits/${sha}`,
    })),
  };
}

const pullHead = (p: FakePull) => p.head ?? p.own?.at(-1)?.sha ?? fakeSha(`head of #${p.number}`);
const headOwner = (p: FakePull) => (p.fork ? p.author : DEFAULT_OWNER);

/**
 * GET /repos/{owner}/{repo}/activity for `ref`, newest first, one page: each entry's `before` is
 * the next one's `after`, the oldest one's is `base` (a branch creation's is zeros).
 */
export function mockActivity(
  mock: GitHubMock,
  ref: string,
  pushes: FakePush[] | "forbidden",
  o: { base?: string; repoPath?: string; page?: number; next?: boolean } = {},
): void {
  const path = o.repoPath ?? REPO_PATH;
  // The activity API pages by cursor: the Link header's next URL carries `after`.
  const cursor = (page: number) => `Y3Vyc29y${page}`;
  const query = { ref, direction: "desc", per_page: "100", ...(o.page ? { after: cursor(o.page) } : {}) };
  const activity = mock.scope(GITHUB_API).get(`${path}/activity`).query(query);
  if (pushes === "forbidden") {
    activity.reply(403, { message: "Resource not accessible by integration" });
    return;
  }
  const zeros = "0".repeat(40);
  const link = `<${GITHUB_API}${path}/activity?ref=${encodeURIComponent(ref)}&direction=desc&per_page=100&after=${cursor((o.page ?? 1) + 1)}>; rel="next"`;
  activity.reply(
    200,
    pushes.map((p, i) => ({
      id: 100 + i + 1000 * (o.page ?? 1),
      node_id: `A_${i}`,
      before: p.kind === "branch_creation" ? zeros : (pushes[i + 1]?.after ?? o.base ?? zeros),
      after: p.after,
      ref,
      timestamp: "2024-05-01T12:00:00Z",
      activity_type: p.kind ?? "push",
      actor: ghUser(p.actor),
    })),
    o.next ? { link } : {},
  );
}

/** A pull request's own commits and who pushed to its branch, as GitHub shows them. */
function mockPullInside(mock: GitHubMock, p: FakePull): void {
  const own = p.own ?? [{ sha: pullHead(p), author: p.author, committer: p.author }];
  mock
    .scope(GITHUB_API)
    .get(`${REPO_PATH}/pulls/${p.number}/commits`)
    .query({ per_page: "100" })
    .reply(200, own.map(apiCommit));
  const branch = p.branch ?? [
    { after: pullHead(p), actor: p.author },
    { after: own[0]?.sha ?? pullHead(p), actor: p.author, kind: "branch_creation" },
  ];
  mockActivity(mock, `refs/heads/feature-${p.number}`, branch, {
    repoPath: `/repos/${headOwner(p)}/${DEFAULT_REPO}`,
    ...(p.branchFrom ? { base: p.branchFrom } : {}),
    ...(p.branchMore ? { next: true } : {}),
  });
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
      sha: pullHead(p),
      ref: `feature-${p.number}`,
      repo: { id: p.fork ? 4242 : BASE_REPO_ID, name: DEFAULT_REPO, owner: { login: headOwner(p) } },
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
    /**
     * Who moved main to which commit (repository activity), newest first, the oldest one from
     * `base`; default GitHub's web merge of `head`.
     */
    pushes?: FakePush[] | "forbidden" | { pages: FakePush[][]; more?: boolean };
    /** The branch the range is on (its activity is read); default main. */
    branch?: string;
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
  const main = o.pushes ?? [{ after: o.head, actor: "web-flow" }];
  const base = o.base === undefined ? {} : { base: o.base };
  const ref = `refs/heads/${o.branch ?? "main"}`;
  if (main === "forbidden" || Array.isArray(main)) mockActivity(mock, ref, main, base);
  else
    for (const [i, page] of main.pages.entries())
      mockActivity(mock, ref, page, {
        ...(i > 0 ? { page: i + 1 } : {}),
        next: i < main.pages.length - 1 || main.more === true,
      });
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
  const carried = o.pulls.filter((p) => p.commits.some((s) => shown.some((c) => c.sha === s)));
  for (const p of carried.filter((p) => p.mergedBy !== undefined))
    api.get(`${REPO_PATH}/pulls/${p.number}`).reply(200, apiPull(p));
  for (const p of carried) mockPullInside(mock, p);
}
