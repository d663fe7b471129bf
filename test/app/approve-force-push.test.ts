// `/approve` when the commit an environment runs is gone from its branch (a force push rewrote
// `main`): GitHub's compare of the deployed commit with the pending one is a 404. The range then
// starts at the newest commit the environment ran before that still shares history with the
// pending one, so the rewritten commits and whoever force-pushed them count; with none (an orphan
// history) no approval is accepted. The reply says what happened instead of "could not be run: Not
// Found (404)". And an approval given while a rollback pins the environment says that it deploys
// the newer commit and ends the pin, or why it does not (a commit off the pinned one's line). The
// state is the environment's as the reconciler would hold it; every request goes to the
// OpenAPI-validated mock.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { parseConfig } from "../../src/config/load.ts";
import { guardsOf } from "../../src/config/stricter.ts";
import { handleCommentCommands } from "../../src/github/comment-commands.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import type { RepoRuntime } from "../../src/github/runtime.ts";
import type { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import { pinNotEndedRefusal } from "../../src/reconciler/pin.ts";
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
const EARLIER = fakeSha("deployed a week ago");
const DEPLOYED = fakeSha("deployed before the force push");
const REWRITTEN = fakeSha("the force-pushed commit");
const PENDING = fakeSha("head after the force push");

const mock = mockGitHub();
afterEach(() => mock.reset());

/** The repository's runtime as the comment handler sees it: prod ran DEPLOYED, PENDING waits. */
type Approved = Awaited<ReturnType<EnvironmentController["approve"]>>;

function runtime(
  extra: Partial<EnvironmentState> = {},
  answer: Partial<Approved> = {},
): {
  rt: RepoRuntime;
  approved: Array<{ revision: string; base: string }>;
} {
  const config = parseConfig(CONFIG);
  const env = config.environments[0];
  if (!env) throw new Error("no environment");
  const instance = "shop.prod";
  const state: EnvironmentState = {
    ...defaultState(instance),
    lastSyncedRevision: DEPLOYED,
    deployedRules: { revision: DEPLOYED, ...guardsOf(env) },
    history: [EARLIER, DEPLOYED].map((revision, i) => ({
      id: i + 1,
      revision,
      trigger: "push",
      actor: "dave",
      startedAt: "2024-04-01T12:00:00Z",
      finishedAt: "2024-04-01T12:00:05Z",
      result: "Succeeded",
      message: "synced",
    })) as EnvironmentState["history"],
    pendingSync: {
      revision: PENDING,
      trigger: "push",
      actor: "mallory",
      requestedAt: "2024-05-01T12:00:00Z",
      manual: false,
      pusher: "mallory",
    },
    ...extra,
  };
  const approved: Array<{ revision: string; base: string }> = [];
  const controller = {
    env,
    instance,
    rules: async () => env,
    base: async () => DEPLOYED,
    approve: async (revision: string, login: string, _id: number, base: string) => {
      approved.push({ revision, base });
      return { approvers: [login], needed: 1, released: true, expired: 0, ...answer };
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
  it("counts from the commit prod ran before: the rewritten commits and the force push are in the range", async () => {
    const { rt, approved } = runtime();
    mockReactions(mock, 1001, "rocket");
    mockPermission(mock, "carol", "write");
    mergedPull();
    // GitHub's compare of the deployed commit with the pending one: the deployed one is gone.
    gone(DEPLOYED);
    // From the commit prod ran before: the force-pushed commit and the pending one, and who moved main.
    mockRange(mock, {
      base: EARLIER,
      head: PENDING,
      commits: [
        { sha: REWRITTEN, author: "mallory" },
        { sha: PENDING, author: "dave" },
      ],
      pulls: [],
      pushes: [
        { after: PENDING, actor: "dave" },
        { after: REWRITTEN, actor: "mallory", kind: "force_push" },
      ],
    });
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), command("carol", 3001));
    mock.assertDone();
    assert.deepEqual(approved, [{ revision: PENDING, base: DEPLOYED }]);
    const body = reply.body();
    assert.doesNotMatch(body, /404|Not Found|could not be run/);
    assert.match(body, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\); deploying\./);
    assert.match(
      body,
      /\*\*prod\*\* runs `[0-9a-f]{7}`, which is no longer in the history of `main` \(a force push rewrote the branch\), so the approval is judged on every commit since `[0-9a-f]{7}`/,
    );
    assert.match(body, /\n\n\*\*Next:\*\* the check run `syncward \/ prod` shows the deployment\.$/);
  });

  it("whoever force-pushed a commit of the range cannot approve it, even when someone else pushed on top", async () => {
    const { rt, approved } = runtime();
    mockReactions(mock, 1001, "confused");
    mockPermission(mock, "mallory", "write");
    mergedPull();
    gone(DEPLOYED);
    mockRange(mock, {
      base: EARLIER,
      head: PENDING,
      commits: [
        { sha: REWRITTEN, author: "dave" },
        { sha: PENDING, author: "dave" },
      ],
      pulls: [],
      pushes: [
        { after: PENDING, actor: "dave" },
        { after: REWRITTEN, actor: "mallory", kind: "force_push" },
      ],
    });
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), command("mallory", userIdOf("mallory")));
    mock.assertDone();
    assert.deepEqual(approved, []);
    assert.match(reply.body(), /^Sorry @mallory, you cannot approve \*\*prod\*\*: you .*pushed/);
    assert.match(reply.body(), /no longer in the history of `main`/);
  });

  it("an orphan history (no commit prod ran shares history with it) is approved by nobody", async () => {
    const { rt, approved } = runtime();
    mockReactions(mock, 1001, "confused");
    mockPermission(mock, "carol", "write");
    mergedPull();
    gone(DEPLOYED);
    gone(EARLIER);
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), command("carol", 3001));
    mock.assertDone();
    assert.deepEqual(approved, []);
    assert.match(
      reply.body(),
      /^Sorry @carol, you cannot approve \*\*prod\*\*: .*no commit prod ran before shares history with `[0-9a-f]{7}`, so nobody can tell which commits are new/,
    );
    assert.match(reply.body(), /syncward app sync prod --revision/);
  });
});

/** GitHub's compare of `base` with the pending commit: 404, `base` is gone from the history. */
describe("/approve while the environment is pinned by a rollback", () => {
  const pin = { revision: EARLIER, historyId: 1, by: "erin", at: "2024-05-01T13:00:00Z", reason: "" };
  /** carol approves PENDING, which dave pushed on top of the pinned commit's line. */
  const approve = async (answer: Partial<Approved>, reaction: "rocket" | "confused") => {
    const { rt, approved } = runtime({ pin }, answer);
    mockReactions(mock, 1001, reaction);
    mockPermission(mock, "carol", "write");
    mock.api
      .get(`${REPO_PATH}/pulls/7`)
      .reply(
        200,
        apiPull({ number: 7, author: "dave", mergedBy: "dave", commits: [], mergeCommit: PENDING }),
      );
    gone(DEPLOYED);
    mockRange(mock, {
      base: EARLIER,
      head: PENDING,
      commits: [
        { sha: REWRITTEN, author: "dave" },
        { sha: PENDING, author: "dave" },
      ],
      pulls: [],
      pushes: [{ after: PENDING, actor: "dave" }],
    });
    const reply = mockReply(mock, 7);
    await handleCommentCommands(rt, gh(), command("carol", 3001));
    mock.assertDone();
    assert.equal(approved.length, 1, "the approval is recorded");
    return reply.body();
  };

  it("an approval of a newer commit deploys it and says that it ends the pin", async () => {
    const body = await approve({ endedPin: pin }, "rocket");
    assert.match(
      body,
      /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\); deploying; this ends the pin at `[0-9a-f]{7}` \(rollback to history 1 by erin\)\./,
    );
    assert.match(body, /\*\*Next:\*\* the check run `syncward \/ prod` shows the deployment\./);
  });

  it("an approval of a commit off the pinned one's line is recorded, deploys nothing and says to unpin", async () => {
    const refused = pinNotEndedRefusal(pin, PENDING, "prod", "main");
    const body = await approve({ released: false, refused }, "confused");
    assert.match(
      body,
      /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\), but the sync is .*prod is pinned at `?[0-9a-f]{7}`? by erin \(rollback to history 1\), and `?[0-9a-f]{7}`? is not a newer commit of main after it .*does not end the pin; .*\/unpin prod.* first.*\. Nothing was changed\./,
    );
    assert.doesNotMatch(body, /deploying|shows the deployment/);
    assert.match(body, /\*\*Next:\*\* `\/unpin prod` once the branch is fit to deploy again/);
  });
});

/** The pull request the comment is on: dave's, merged as PENDING. */
function mergedPull(): void {
  mock.api
    .get(`${REPO_PATH}/pulls/7`)
    .reply(200, apiPull({ number: 7, author: "dave", mergedBy: "dave", commits: [], mergeCommit: PENDING }));
}

function gone(base: string): void {
  mock.api
    .get(`${REPO_PATH}/compare/${base}...${PENDING}`)
    .query(true)
    .reply(404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
}

function command(login: string, userId: number) {
  return {
    commentId: 1001,
    body: "/approve prod",
    login,
    userId,
    senderType: "User" as const,
    pullNumber: 7,
    author: "dave",
    authorId: 3003,
    merged: true,
  };
}
