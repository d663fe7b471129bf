// `/approve` when the commit an environment runs is gone from its branch (a force push rewrote
// `main`): GitHub's compare of the deployed commit with the pending one is a 404. The reply says
// the deployed commit is gone and approves the pending commit as a whole new release, judged as a
// first deployment is, instead of "could not be run: Not Found (404)". The state is the
// environment's as the reconciler would hold it; every request goes to the OpenAPI-validated mock.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { parseConfig } from "../../src/config/load.ts";
import { guardsOf } from "../../src/config/stricter.ts";
import { handleCommentCommands } from "../../src/github/comment-commands.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import type { RepoRuntime } from "../../src/github/runtime.ts";
import { defaultState } from "../../src/state/store.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { mockPermission, mockReactions, mockReply, REPO_PATH } from "../support/app.ts";
import { mockGitHub, TestOctokit } from "../support/github.ts";
import { apiPull, mockRange } from "../support/github-range.ts";
import { fakeSha, userIdOf } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: shop-prod}
    production: true
    approval: {minimum: 1}
`;
const DEPLOYED = fakeSha("deployed before the force push");
const PENDING = fakeSha("head after the force push");

const mock = mockGitHub();
afterEach(() => mock.reset());

/** The repository's runtime as the comment handler sees it: prod ran DEPLOYED, PENDING waits. */
function runtime(): { rt: RepoRuntime; approved: Array<{ revision: string; base: string }> } {
  const config = parseConfig(CONFIG);
  const env = config.environments[0];
  if (!env) throw new Error("no environment");
  const instance = "shop.prod";
  const state: EnvironmentState = {
    ...defaultState(instance),
    lastSyncedRevision: DEPLOYED,
    deployedRules: { revision: DEPLOYED, ...guardsOf(env) },
    pendingSync: {
      revision: PENDING,
      trigger: "push",
      actor: "mallory",
      requestedAt: "2024-05-01T12:00:00Z",
      manual: false,
      pusher: "mallory",
    },
  };
  const approved: Array<{ revision: string; base: string }> = [];
  const controller = {
    env,
    instance,
    rules: async () => env,
    base: async () => DEPLOYED,
    approve: async (revision: string, login: string, _id: number, base: string) => {
      approved.push({ revision, base });
      return { approvers: [login], needed: 1, released: true };
    },
  };
  const store = { load: async () => state, list: async () => [state], update: async () => state };
  const rt = {
    ref: { owner: "acme", repo: "shop" },
    info: { defaultBranch: "main" },
    config,
    log: { error: () => {}, warn: () => {}, info: () => {} },
    reconciler: { app: "shop", store, environments: [controller], controller: () => controller },
  } as unknown as RepoRuntime;
  return { rt, approved };
}

const gh = () => new TestOctokit({ auth: "test-token" }) as unknown as Octokit;

describe("/approve after a force push took the deployed commit out of main", () => {
  it("says the deployed commit is gone and approves the pending commit as a whole new release", async () => {
    const { rt, approved } = runtime();
    mockReactions(mock, 1001, "rocket");
    mockPermission(mock, "carol", "write");
    mock.api
      .get(`${REPO_PATH}/pulls/7`)
      .reply(
        200,
        apiPull({ number: 7, author: "mallory", mergedBy: "mallory", commits: [], mergeCommit: PENDING }),
      );
    // GitHub's compare of the deployed commit with the pending one: the deployed one is gone.
    mock.api
      .get(`${REPO_PATH}/compare/${DEPLOYED}...${PENDING}`)
      .query(true)
      .reply(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
    // Then the pending commit alone, with its pull request, and who force-pushed main to it.
    mockRange(mock, {
      head: PENDING,
      commits: [{ sha: PENDING, author: "mallory" }],
      pulls: [],
      pushes: [{ after: PENDING, actor: "mallory", kind: "force_push" }],
    });
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), {
      commentId: 1001,
      body: "/approve prod",
      login: "carol",
      userId: 3001,
      senderType: "User",
      pullNumber: 7,
      author: "mallory",
      authorId: 3002,
      merged: true,
    });
    mock.assertDone();
    assert.deepEqual(approved, [{ revision: PENDING, base: DEPLOYED }]);
    const body = reply.body();
    assert.doesNotMatch(body, /404|Not Found|could not be run/);
    assert.match(body, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\); deploying\./);
    assert.match(
      body,
      /\*\*prod\*\* runs `[0-9a-f]{7}`, which is no longer in the history of `main` \(a force push rewrote the branch\), so there are no commits to count from it: an approval covers `[0-9a-f]{7}` as a whole new release \(everything it renders\)/,
    );
    assert.match(body, /\n\n\*\*Next:\*\* the check run `syncward \/ prod` shows the deployment\.$/);
  });

  it("the force-pusher still cannot approve what they pushed", async () => {
    const { rt, approved } = runtime();
    mockReactions(mock, 1001, "confused");
    mockPermission(mock, "mallory", "write");
    mock.api
      .get(`${REPO_PATH}/pulls/7`)
      .reply(
        200,
        apiPull({ number: 7, author: "dave", mergedBy: "dave", commits: [], mergeCommit: PENDING }),
      );
    mock.api
      .get(`${REPO_PATH}/compare/${DEPLOYED}...${PENDING}`)
      .query(true)
      .reply(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
    mockRange(mock, {
      head: PENDING,
      commits: [{ sha: PENDING, author: "dave" }],
      pulls: [],
      pushes: [{ after: PENDING, actor: "mallory", kind: "force_push" }],
    });
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), {
      commentId: 1001,
      body: "/approve prod",
      login: "mallory",
      userId: userIdOf("mallory"),
      senderType: "User",
      pullNumber: 7,
      author: "dave",
      authorId: 3003,
      merged: true,
    });
    mock.assertDone();
    assert.deepEqual(approved, []);
    assert.match(reply.body(), /^Sorry @mallory, you cannot approve \*\*prod\*\*: you .*pushed/);
    assert.match(reply.body(), /no longer in the history of `main`/);
  });
});
