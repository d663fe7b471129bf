// What an approval is judged against when the environment's own history does not say all of it:
// an environment renamed in the config (a new name, so no state of its own) measures what would be
// deployed from the revision the environment it inherits its rules from last synced, not from the
// head commit alone; an environment tracking `release` whose render a config commit on `main`
// moved counts that commit's people too. Against GitHub's API (nock, validated) and the real state store.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { guardsOf } from "../../src/config/stricter.ts";
import type { HelmSource } from "../../src/config/types.ts";
import { pinListedApprovers } from "../../src/github/approver-pins.ts";
import type { Octokit } from "../../src/github/octokit.ts";
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
import { fakeSha, issueCommentEvent, repoIdOf, userIdOf } from "../support/webhooks.ts";

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

/** `login` comments `/approve <env>` on `pull` (a listed approver with write permission); the reply. */
async function approveOn(
  app: TestApp,
  env: string,
  pull: FakePull,
  login: string,
  outcome: "rocket" | "confused",
  commentId: number,
): Promise<string> {
  mockReactions(app.mock, commentId, outcome);
  mockAccount(app.mock, login);
  mockPermission(app.mock, login, "write");
  app.mock.api.get(`${REPO_PATH}/pulls/${pull.number}`).reply(200, apiPull(pull));
  const reply = mockReply(app.mock, pull.number);
  await app.probot.receive(
    issueCommentEvent({
      body: `/approve ${env}`,
      sender: { login },
      number: pull.number,
      author: pull.author,
      commentId,
    }),
  );
  app.mock.assertDone();
  return reply.body();
}

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
      id: repoIdOf("acme/shop"),
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

  const approve = (login: string, outcome: "rocket" | "confused", commentId: number) =>
    approveOn(app, "production", DOCS_PR, login, outcome, commentId);

  it("Mallory, whose change M is in prod's undeployed range, cannot approve production at Bob's docs commit", async () => {
    range();
    const reply = await approve("mallory", "confused", 2001);
    assert.match(
      reply,
      new RegExp(
        `^Sorry @mallory, you cannot approve \\*\\*production\\*\\*: you authored ${malloryM.slice(0, 7)}, opened #6, merged #6, 3 more in what would be deployed \\(\`${deployedA.slice(0, 7)}\\.\\.${bobDocs.slice(0, 7)}\`\\)`,
      ),
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("prod's pins bind production: a listed login pinned under the old name is refused to another account", async () => {
    await rt.reconciler.store.update(instanceName(rt.reconciler.app, "prod"), (s) => {
      s.approverIds = { erin: 4_242_555 };
    });
    mockReactions(app.mock, 2003, "confused");
    mockPermission(app.mock, "erin", "read");
    const reply = mockReply(app.mock, DOCS_PR.number);
    await app.probot.receive(
      issueCommentEvent({
        body: "/approve production",
        sender: { login: "erin" },
        number: DOCS_PR.number,
        author: "bob",
        commentId: 2003,
      }),
    );
    app.mock.assertDone();
    assert.match(
      reply.body(),
      /^Sorry @erin, you cannot approve \*\*production\*\*: @erin is listed as an approver but is now a different GitHub account \(id \d+; the listed one is id 4242555\)/,
    );
    await rt.reconciler.store.update(instanceName(rt.reconciler.app, "prod"), (s) => {
      s.approverIds = undefined;
    });
  });

  it("Erin's approval is recorded against prod's last synced revision, and counts", async () => {
    range();
    const reply = await approve("erin", "rocket", 2002);
    assert.equal(
      reply,
      `Approved \`${bobDocs.slice(0, 7)}\` for **production** (1/2); waiting for more approvals.\n\n**Next:** another approver comments \`/approve production\`; \`/help\` lists who may.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(
      state.pendingApprovals.map((a) => ({ by: a.by, id: a.id, base: a.base })),
      [{ by: "erin", id: userIdOf("erin"), base: deployedA }],
    );
  });

  it("a config push pins every listed login at once, to an account that is a collaborator; the others are named", async () => {
    const octokit = (await app.probot.auth(4242)) as unknown as Octokit;
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = undefined; // as the approvals above left them: pinned at first use
    });
    app.mock.api
      .get("/users/mallory")
      .reply(200, { login: "mallory", id: userIdOf("mallory"), type: "User" });
    app.mock.api.get(`${REPO_PATH}/collaborators/mallory`).reply(204);
    app.mock.api.get("/users/erin").reply(200, { login: "erin", id: userIdOf("erin"), type: "User" });
    app.mock.api.get(`${REPO_PATH}/collaborators/erin`).reply(404, { message: "Not Found" });
    assert.deepEqual(await pinListedApprovers(octokit, rt), ["erin"]);
    app.mock.assertDone();
    assert.deepEqual((await rt.reconciler.store.load(instance)).approverIds, {
      mallory: userIdOf("mallory"),
    });
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = undefined;
    });
  });
});

describe("an environment tracking release, moved by a config commit on main", () => {
  let app: TestApp;
  let rt: RepoRuntime;
  let instance: string;
  const released = fakeSha("release head H");
  const configBefore = fakeSha("config on main when prod deployed H");
  const malloryConfig = fakeSha("mallory's config commit: image.tag evil");
  const RELEASE_PR: FakePull = {
    number: 9,
    author: "carol",
    mergedBy: "carol",
    commits: [released],
    mergeCommit: released,
  };
  const CONFIG_PR: FakePull = {
    number: 10,
    author: "mallory",
    mergedBy: "mallory",
    commits: [malloryConfig],
    mergeCommit: malloryConfig,
  };

  let ns: string;
  const INFO = {
    id: repoIdOf("acme/shop"),
    owner: "acme",
    repo: "shop",
    installationId: 4242,
    htmlUrl: "https://github.com/acme/shop",
    defaultBranch: "main",
  };
  const CONFIG = (namespace: string) => `environments:
  - name: prod
    source: {path: prod, branch: release, helm: {valuesObject: {image: {tag: evil}}}}
    destination: {namespace: ${namespace}}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [mallory, erin], minimum: 2}
`;

  before(async () => {
    ns = await cluster.namespace("appr-cfg");
    const stateNs = await cluster.stateNamespace("appr-cfg-state");
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(app.mock, CONFIG(ns));
    // The push of Mallory's merge on main reloaded the config: it was read at her commit.
    rt = (await app.parts.runtimes.for(INFO, true, malloryConfig)) as RepoRuntime;
    const prod = rt.reconciler.controller("prod");
    instance = prod.instance;
    // prod deployed H under the config of `configBefore` (another image tag); it waits at H again.
    const before = {
      ...prod.env,
      source: {
        ...prod.env.source,
        helm: { ...(prod.env.source.helm as HelmSource), valuesObject: { image: { tag: "1.0" } } },
      },
    };
    await rt.reconciler.store.update(instance, (s) => {
      s.lastSyncedRevision = released;
      s.deployedRules = { revision: released, ...guardsOf(before), configRevision: configBefore };
      s.syncStatus = "OutOfSync";
      s.pendingSync = {
        revision: released,
        trigger: "poll",
        actor: "syncward",
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

  /** What GitHub says: release's range is H alone (carol's release PR, pushed by carol); main's config commits since. */
  const ranges = (configPull: FakePull = CONFIG_PR) => {
    mockRange(app.mock, {
      head: released,
      commits: [{ sha: released, author: "carol" }],
      pulls: [RELEASE_PR],
      pushes: [{ after: released, actor: "carol", kind: "pr_merge" }],
      branch: "release",
    });
    mockRange(app.mock, {
      base: configBefore,
      head: malloryConfig,
      commits: [{ sha: malloryConfig, author: "mallory" }],
      pulls: [configPull],
      pushes: [{ after: malloryConfig, actor: "mallory", kind: "pr_merge" }],
    });
  };

  it("Mallory, who authored and merged the config commit, cannot approve prod at the same release commit", async () => {
    ranges();
    const reply = await approveOn(app, "prod", RELEASE_PR, "mallory", "confused", 3001);
    assert.match(
      reply,
      new RegExp(
        `^Sorry @mallory, you cannot approve \\*\\*prod\\*\\*: you authored ${malloryConfig.slice(0, 7)} \\(the config on main\\), opened #10 \\(the config on main\\), merged #10 \\(the config on main\\), 4 more in what would be deployed \\(`,
      ),
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("a config loaded without a push (a start, a reinstall) records the default branch's head it was read beside", async () => {
    const head = fakeSha("main head at start");
    mockConfig(app.mock, CONFIG(ns));
    app.mock.api.get(`${REPO_PATH}/branches/main`).reply(200, {
      name: "main",
      protected: false,
      commit: { sha: head, url: `https://api.github.com${REPO_PATH}/commits/${head}` },
      _links: { self: "", html: "" },
    });
    const started = (await app.parts.runtimes.for(INFO, true)) as RepoRuntime;
    app.mock.assertDone();
    assert.equal(started.reconciler.controller("prod").env.configRevision, head);
    mockConfig(app.mock, CONFIG(ns));
    rt = (await app.parts.runtimes.for(INFO, true, malloryConfig)) as RepoRuntime;
  });

  it("who pushed to the config pull request's branch cannot be read: Erin's approval does not count, and the reply says why", async () => {
    ranges({ ...CONFIG_PR, branch: "forbidden" });
    const reply = await approveOn(app, "prod", RELEASE_PR, "erin", "confused", 3003);
    assert.equal(
      reply,
      `Sorry @erin, you cannot approve **prod**: cannot read who pushed to #10's branch acme/shop:feature-10 (repository activity: 403) (the config changes on \`main\` since ${configBefore.slice(0, 7)}), so nobody can be sure they did not contribute (or set approval.allowAuthor: true). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = undefined; // as the tests around it expect: Erin not pinned yet
    });
  });

  it("Erin, who changed nothing, approves", async () => {
    ranges();
    const reply = await approveOn(app, "prod", RELEASE_PR, "erin", "rocket", 3002);
    assert.equal(
      reply,
      `Approved \`${released.slice(0, 7)}\` for **prod** (1/2); waiting for more approvals.\n\n**Next:** another approver comments \`/approve prod\`; \`/help\` lists who may.`,
    );
  });
});
