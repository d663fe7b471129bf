// Who put a preview's head on its branch, as previewFactsOf reads it from GitHub (mocked, each
// request checked against GitHub's OpenAPI description): the head's commits are those of the exact
// head being handled that are not on the default branch, so moving the pull request's base or
// force-pushing before the event is handled hides no commit; a merge into the branch counts as a
// push by who merged; and what GitHub does not show in full holds the preview back.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Octokit } from "../../../src/github/octokit.ts";
import { previewDecision } from "../../../src/github/preview-eligibility.ts";
import { ACTIVITY_PAGES, type PullView, previewFactsOf } from "../../../src/github/preview-facts.ts";
import { mockPermission, REPO_PATH } from "../../support/app.ts";
import { createTestProbot, type GitHubMock, mockGitHub } from "../../support/github.ts";
import { apiCommit, type FakePush, mockActivity } from "../../support/github-range.ts";
import { previewTemplate } from "../../support/preview-template.ts";
import { fakeSha } from "../../support/webhooks.ts";

const repo = { owner: "acme", repo: "shop" };
const BRANCH = "feature-7";
const REF = `refs/heads/${BRANCH}`;
const template = previewTemplate();
const pull = (head: string): PullView => ({
  number: 7,
  state: "open",
  head: { ref: BRANCH, sha: head, repoId: 1 },
  baseRepoId: 1,
  author: "octocat",
  labels: ["preview"],
});
const [X, G, G2, M] = ["eve's commit", "a writer's commit on top", "a force push without eve's", "merge"].map(
  fakeSha,
) as [string, string, string, string];

let mock: GitHubMock | undefined;
afterEach(() => {
  mock?.reset();
  mock = undefined;
});

async function octokit(): Promise<Octokit> {
  return (await (await createTestProbot()).auth()) as unknown as Octokit;
}

/** The commits of `head` that are not on main, as the compare API lists them (every page). */
function mockCompare(
  m: GitHubMock,
  head: string,
  commits: string[],
  o: { total?: number; pages?: number } = {},
): void {
  const pages = o.pages ?? Math.max(1, Math.ceil(commits.length / 100));
  for (let page = 1; page <= pages; page++)
    m.api
      .get(`${REPO_PATH}/compare/main...${head}`)
      .query({ per_page: "100", page: String(page) })
      .reply(200, {
        status: "ahead",
        ahead_by: o.total ?? commits.length,
        behind_by: 0,
        total_commits: o.total ?? commits.length,
        commits: commits
          .slice((page - 1) * 100, page * 100)
          .map((sha) => apiCommit({ sha, author: "octocat" })),
      });
}

/**
 * What the pull request's own list says now (GET /pulls/7/commits): only its commits beyond its
 * current base, as GitHub computes them. Never to be relied on, so not required.
 */
function mockPullList(m: GitHubMock, commits: string[]): void {
  m.api
    .get(`${REPO_PATH}/pulls/7/commits`)
    .query(true)
    .optionally()
    .reply(
      200,
      commits.map((sha) => apiCommit({ sha, author: "octocat" })),
    );
}

async function factsOf(head: string, activity: FakePush[], o: { sender?: string } = {}) {
  const m = mock as GitHubMock;
  mockActivity(m, REF, activity);
  mockPermission(m, "octocat", "write");
  const facts = await previewFactsOf(await octokit(), repo, pull(head), true, { trusted: "main", ...o });
  return { facts, decision: previewDecision(template, { kind: "synchronize" }, facts) };
}

describe("who put a preview's head on its branch", () => {
  it("a base moved to a branch at a commit pushed without the permission hides nothing: the head is read against the default branch", async () => {
    mock = mockGitHub();
    // A writer made a branch at eve's commit and made it the pull request's base: the pull
    // request lists only G now. The default branch has neither.
    mockPullList(mock, [G]);
    mockCompare(mock, G, [X, G]);
    mockPermission(mock, "eve", "read");
    const { facts, decision } = await factsOf(
      G,
      [
        { after: G, actor: "octocat" },
        { after: X, actor: "eve" },
        { after: fakeSha("start"), actor: "octocat", kind: "branch_creation" },
      ],
      { sender: "octocat" },
    );
    assert.deepEqual(
      facts.pushers.find((p) => p.login === "eve"),
      { login: "eve", permission: "read" },
    );
    assert.equal(decision.action, "hold");
    assert.match(decision.action === "hold" ? decision.reason : "", /@eve \(read\)/);
    mock.assertDone();
  });

  it("a push handled after a later force push is judged at its own head, not at the pull request's head now", async () => {
    mock = mockGitHub();
    // eve pushed X, a writer pushed G on top, then force-pushed G2 without X; G's event comes last.
    mockPullList(mock, [G2]);
    mockCompare(mock, G, [X, G]);
    mockPermission(mock, "eve", "read");
    const { facts, decision } = await factsOf(
      G,
      [
        { after: G2, actor: "octocat", kind: "force_push" },
        { after: G, actor: "octocat" },
        { after: X, actor: "eve" },
      ],
      { sender: "octocat" },
    );
    assert.ok(facts.pushers.some((p) => p.login === "eve"));
    assert.equal(decision.action, "hold");
    mock.assertDone();
  });

  for (const kind of ["pr_merge", "merge_queue_merge"])
    it(`a merge into the branch (${kind}) counts as a push by who merged it`, async () => {
      mock = mockGitHub();
      mockCompare(mock, M, [X, M]);
      mockPermission(mock, "eve", "read");
      const { facts, decision } = await factsOf(M, [{ after: M, actor: "eve", kind }]);
      assert.deepEqual(
        facts.pushers.find((p) => p.login === "eve"),
        { login: "eve", permission: "read" },
      );
      assert.equal(decision.action, "hold");
      mock.assertDone();
    });

  it("a head whose commits beyond the default branch are read in pages qualifies when every pusher may", async () => {
    mock = mockGitHub();
    const many = Array.from({ length: 260 }, (_, i) => fakeSha(`commit ${i}`));
    const head = many.at(-1) as string;
    mockCompare(mock, head, many);
    const { facts, decision } = await factsOf(head, [
      { after: head, actor: "octocat" },
      { after: many[0] as string, actor: "octocat", kind: "branch_creation" },
    ]);
    assert.equal(facts.unreadable, undefined);
    assert.equal(decision.action, "resync");
    mock.assertDone();
  });

  it("more commits beyond the default branch than syncward reads hold the preview, saying why", async () => {
    mock = mockGitHub();
    mockCompare(mock, G, [X, G], { total: 501 });
    const { facts, decision } = await factsOf(G, [{ after: G, actor: "octocat" }]);
    assert.match(String(facts.unreadable), /has 501 commits that are not on main/);
    assert.equal(decision.action, "hold");
    assert.match(decision.action === "hold" ? decision.reason : "", /could not tell everyone who pushed/);
    mock.assertDone();
  });

  it("GitHub listing fewer of the head's commits than it counts holds the preview", async () => {
    mock = mockGitHub();
    const some = Array.from({ length: 150 }, (_, i) => fakeSha(`listed ${i}`));
    mockCompare(mock, G, some, { total: 300, pages: 2 });
    const { facts, decision } = await factsOf(G, [{ after: G, actor: "octocat" }]);
    assert.match(String(facts.unreadable), /GitHub listed 150 of the 300 commits/);
    assert.equal(decision.action, "hold");
    mock.assertDone();
  });

  it("branch activity longer than syncward reads holds the preview: an older push could have brought a commit", async () => {
    mock = mockGitHub();
    mockCompare(mock, G, [X, G]);
    mockPermission(mock, "octocat", "write");
    const filler = (page: number) =>
      Array.from({ length: 100 }, (_, i) => ({ after: fakeSha(`other ${page}.${i}`), actor: "octocat" }));
    for (let page = 1; page <= ACTIVITY_PAGES; page++)
      mockActivity(mock, REF, page === 1 ? [{ after: G, actor: "octocat" }, ...filler(page)] : filler(page), {
        ...(page > 1 ? { page } : {}),
        next: true,
      });
    const facts = await previewFactsOf(await octokit(), repo, pull(G), true, { trusted: "main" });
    assert.match(String(facts.unreadable), /activity of feature-7 has more than 500 changes/);
    assert.equal(previewDecision(template, { kind: "synchronize" }, facts).action, "hold");
    mock.assertDone();
  });
});
