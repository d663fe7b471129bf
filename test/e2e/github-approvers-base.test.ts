// What an approval is judged against when the environment's own history does not say: an
// environment renamed in the config (a new name, so no state of its own) measures what would be
// deployed from the revision the environment it inherits its rules from last synced, not from the
// head commit alone. Against GitHub's compare API (nock, validated) and the real state store.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { guardsOf } from "../../src/config/stricter.ts";
import type { RepoRuntime } from "../../src/github/runtime.ts";
import { instanceName } from "../../src/reconciler/environment-controller.ts";
import {
  mockConfig,
  mockPermission,
  mockReactions,
  mockReply,
  REPO_PATH,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { apiPull, type FakePull, mockAccount, mockRange } from "../support/github-range.ts";
import { fakeSha, issueCommentEvent, userIdOf } from "../support/webhooks.ts";

const cluster = useCluster();

const deployedA = fakeSha("prod deployed A");
const malloryM = fakeSha("mallory's change M");
const bobDocs = fakeSha("bob docs D");
const DOCS_PR: FakePull = {
  number: 7,
  author: "bob",
  mergedBy: "bob",
  commits: [bobDocs],
  mergeCommit: bobDocs,
};
const MALLORY_PR: FakePull = {
  number: 6,
  author: "mallory",
  mergedBy: "mallory",
  commits: [malloryM],
  mergeCommit: malloryM,
};

describe("an environment renamed in the config is judged from the revision it inherits", () => {
  let app: TestApp;
  let rt: RepoRuntime;
  let instance: string;

  before(async () => {
    const prodNs = await cluster.namespace("appr-base");
    const stateNs = await cluster.stateNamespace("appr-base-state");
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    // prod was renamed to production in this config: same destination, same approvers.
    mockConfig(
      app.mock,
      `environments:
  - name: production
    source: {path: prod}
    destination: {namespace: ${prodNs}}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [mallory, erin], minimum: 2}
`,
    );
    rt = (await app.parts.runtimes.for({
      owner: "acme",
      repo: "shop",
      installationId: 4242,
      htmlUrl: "https://github.com/acme/shop",
      defaultBranch: "main",
    })) as RepoRuntime;
    const production = rt.reconciler.controller("production");
    instance = production.instance;
    // What prod left behind: it deployed A under these rules; production has never synced.
    await rt.reconciler.store.update(instanceName(rt.reconciler.app, "prod"), (s) => {
      s.lastSyncedRevision = deployedA;
      s.deployedRules = { revision: deployedA, ...guardsOf(production.env) };
      s.syncStatus = "OutOfSync";
    });
    await rt.reconciler.store.update(instance, (s) => {
      s.syncStatus = "OutOfSync";
      s.pendingSync = {
        revision: bobDocs,
        trigger: "merge",
        actor: "bob",
        pusher: "bob",
        requestedAt: new Date().toISOString(),
        manual: false,
      };
    });
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  beforeEach(() => app.mock.reset());

  const range = () =>
    mockRange(app.mock, {
      base: deployedA,
      head: bobDocs,
      commits: [
        { sha: malloryM, author: "mallory" },
        { sha: bobDocs, author: "bob" },
      ],
      pulls: [MALLORY_PR, DOCS_PR],
    });

  const approve = async (login: string, outcome: "rocket" | "confused", commentId: number) => {
    mockReactions(app.mock, commentId, outcome);
    mockAccount(app.mock, login);
    mockPermission(app.mock, login, "write");
    app.mock.api.get(`${REPO_PATH}/pulls/${DOCS_PR.number}`).reply(200, apiPull(DOCS_PR));
    const reply = mockReply(app.mock, DOCS_PR.number);
    await app.probot.receive(
      issueCommentEvent({
        body: "/approve production",
        sender: { login },
        number: DOCS_PR.number,
        author: "bob",
        commentId,
      }),
    );
    app.mock.assertDone();
    return reply.body();
  };

  it("Mallory, whose change M is in prod's undeployed range, cannot approve production at Bob's docs commit", async () => {
    range();
    const reply = await approve("mallory", "confused", 2001);
    assert.match(
      reply,
      new RegExp(
        `^Sorry @mallory, you cannot approve \\*\\*production\\*\\*: you authored ${malloryM.slice(0, 7)}, opened #6, merged #6 in what would be deployed \\(\`${deployedA.slice(0, 7)}\\.\\.${bobDocs.slice(0, 7)}\`\\)`,
      ),
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("Erin's approval is recorded against prod's last synced revision, and counts", async () => {
    range();
    const reply = await approve("erin", "rocket", 2002);
    assert.equal(
      reply,
      `Approved \`${bobDocs.slice(0, 7)}\` for **production** (1/2); waiting for more approvals.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(
      state.pendingApprovals.map((a) => ({ by: a.by, id: a.id, base: a.base })),
      [{ by: "erin", id: userIdOf("erin"), base: deployedA }],
    );
  });
});
