// Who may approve, against GitHub's answers about what would be deployed (compare API, the pull
// requests of each commit) and syncward's state on the real cluster: nobody who contributed to
// the range from the last synced revision to the pending one, nobody on a fork's pull request;
// listed approvers need only read permission. Nothing is synced here (prod needs two approvals):
// each test sees what an approval leaves in the state and what its author is told.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { guardsOf } from "../../src/config/stricter.ts";
import type { RepoRuntime } from "../../src/github/runtime.ts";
import { instanceName } from "../../src/reconciler/environment-controller.ts";
import type { RecordedPush } from "../../src/state/types.ts";
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

const deployed = fakeSha("deployed");
const aliceProd = fakeSha("alice prod change");
const bobDocs = fakeSha("bob docs");

// Alice's prod change (#1) and Bob's docs change (#2) were both squash-merged since the last sync.
const ALICE_PR: FakePull = {
  number: 1,
  author: "alice",
  mergedBy: "alice",
  commits: [aliceProd],
  mergeCommit: aliceProd,
};
const BOB_PR: FakePull = {
  number: 2,
  author: "bob",
  mergedBy: "bob",
  commits: [bobDocs],
  mergeCommit: bobDocs,
};
const twoMerges = {
  base: deployed,
  head: bobDocs,
  commits: [
    { sha: aliceProd, author: "alice" },
    { sha: bobDocs, author: "bob" },
  ],
  pulls: [ALICE_PR, BOB_PR],
};

// Newest first: Bob's merge of his docs, then others' pushes elsewhere on main; whatever brought
// in the commits before it would be on page 4, which syncward does not read.
const threePagesOfBobsMerge = {
  pages: [
    [{ after: bobDocs, actor: "bob", kind: "pr_merge" }],
    [{ after: fakeSha("older 1"), actor: "carol" }],
    [{ after: fakeSha("older 2"), actor: "carol" }],
  ],
  more: true,
};

describe("who may approve a production sync", () => {
  let app: TestApp;
  let rt: RepoRuntime;
  let instance: string;

  before(async () => {
    const prodNs = await cluster.namespace("appr-prod");
    const stateNs = await cluster.stateNamespace("appr-state");
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(
      app.mock,
      `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: ${prodNs}}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [alice, bob, carol, carol-new, dave, erin, mallory], minimum: 2, trustedBots: ["dependabot[bot]"]}
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
    instance = rt.reconciler.controller("prod").instance;
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  /**
   * prod last synced `base` and holds `head`, pushed or merged by `actor` (as its push event named
   * them, moving main from `base` to `head` unless `recorded` lists the push events syncward
   * recorded); `actor` "syncward": a poll found `head` and no push event has arrived.
   */
  const waiting = (base: string, head: string, actor: string, recorded?: RecordedPush[]) =>
    rt.reconciler.store.update(instance, (s) => {
      s.recentPushes =
        recorded ?? (actor === "syncward" ? [] : [{ after: head, before: base, login: actor }]);
      s.lastSyncedRevision = base;
      // As syncward records it when it syncs `base`: the rules it was deployed under.
      s.deployedRules = { revision: base, ...guardsOf(rt.reconciler.controller("prod").env) };
      s.syncStatus = "OutOfSync";
      s.pendingApprovals = [];
      // No listed login is pinned to an id yet: each test's first approval by one looks it up.
      s.approverIds = undefined;
      s.pendingSync = {
        revision: head,
        trigger: actor === "syncward" ? "poll" : "merge",
        actor,
        requestedAt: new Date().toISOString(),
        manual: false,
        ...(actor === "syncward" ? {} : { pusher: actor }),
      };
    });

  const approve = async (
    login: string,
    o: {
      pull: FakePull;
      permission?: "read" | "write";
      outcome?: "rocket" | "confused";
      id?: number;
      /** The commenter's GitHub user id, when not the one of their login. */
      userId?: number;
      /** GitHub is asked who has the login (a listed login not yet pinned to an id); default true. */
      resolves?: boolean;
      /** The pull request is read (the approver passed the listing); default true. */
      readsPull?: boolean;
      /** Their account is a collaborator of the repository (GitHub answers 204); default true. */
      collaborator?: boolean;
    },
  ) => {
    const id = o.id ?? 1001;
    if (o.collaborator === false)
      app.mock.api.get(`${REPO_PATH}/collaborators/${login}`).reply(404, { message: "Not Found" });
    mockReactions(app.mock, id, o.outcome ?? "confused");
    if (o.resolves ?? true) mockAccount(app.mock, login, o.userId);
    mockPermission(app.mock, login, o.permission ?? "write");
    if (o.readsPull ?? true)
      app.mock.api.get(`${REPO_PATH}/pulls/${o.pull.number}`).reply(200, apiPull(o.pull));
    const reply = mockReply(app.mock, o.pull.number);
    await app.probot.receive(
      issueCommentEvent({
        body: "/approve prod",
        sender: { login, ...(o.userId === undefined ? {} : { id: o.userId }) },
        number: o.pull.number,
        author: o.pull.author,
        commentId: id,
      }),
    );
    app.mock.assertDone();
    return reply.body();
  };

  beforeEach(() => app.mock.reset());

  it("Alice merged a prod change: her /approve on Bob's docs PR is refused, and says why", async () => {
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, twoMerges);
    const reply = await approve("alice", { pull: BOB_PR });
    assert.equal(
      reply,
      `Sorry @alice, you cannot approve **prod**: you authored ${aliceProd.slice(0, 7)}, opened #1, merged #1, 3 more in what would be deployed (\`${deployed.slice(0, 7)}..${bobDocs.slice(0, 7)}\`), and nobody who contributed to a change approves its deployment (approval.allowAuthor is false). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(state.pendingApprovals, [], "no approval was recorded");
  });

  it("a colleague who pushed a commit into someone else's PR is refused", async () => {
    const daveWork = fakeSha("dave work");
    const bobFix = fakeSha("bob fix pushed into dave's branch");
    const merge = fakeSha("carol merges #3");
    const davePr: FakePull = {
      number: 3,
      author: "dave",
      mergedBy: "carol",
      commits: [daveWork, bobFix, merge],
      mergeCommit: merge,
    };
    await waiting(deployed, merge, "carol");
    mockRange(app.mock, {
      base: deployed,
      head: merge,
      commits: [
        { sha: daveWork, author: "dave", committer: "dave" },
        { sha: bobFix, author: "bob", committer: "bob" },
        { sha: merge, author: "carol" },
      ],
      pulls: [davePr],
    });
    const reply = await approve("bob", { pull: davePr });
    assert.match(
      reply,
      /^Sorry @bob, you cannot approve \*\*prod\*\*: you authored [0-9a-f]{7}, committed [0-9a-f]{7} in what would be deployed/,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("an approval written on a fork's pull request is refused before anything else is read", async () => {
    await waiting(deployed, bobDocs, "bob");
    const forkPr: FakePull = { number: 4, author: "outsider", commits: [bobDocs], head: bobDocs, fork: true };
    const reply = await approve("erin", { pull: forkPr });
    assert.match(
      reply,
      /^Sorry @erin, you cannot approve \*\*prod\*\*: #4 comes from a fork, and approvals written on a fork's pull request do not count; use the \*\*Approve\*\* button/,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("a listed approver with only read permission approves; the approval is bound to their id", async () => {
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, twoMerges);
    const reply = await approve("carol", { pull: BOB_PR, permission: "read", outcome: "rocket" });
    assert.equal(
      reply,
      `Approved \`${bobDocs.slice(0, 7)}\` for **prod** (1/2); waiting for more approvals.\n\n**Next:** another approver comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(
      state.pendingApprovals.map((a) => ({ sha: a.sha, by: a.by, id: a.id, base: a.base })),
      [{ sha: bobDocs, by: "carol", id: userIdOf("carol"), base: deployed }],
      "bound to her id, and to the last synced revision her eligibility was judged against",
    );
  });

  it("a listed login whose account is no collaborator (a public repository gives everyone read) is refused", async () => {
    await waiting(deployed, bobDocs, "bob");
    const reply = await approve("dave", {
      pull: BOB_PR,
      permission: "read",
      collaborator: false,
      readsPull: false,
    });
    assert.equal(
      reply,
      `Sorry @dave, you cannot approve **prod**: @dave is listed as an approver but is not a collaborator of acme/shop (on a public repository anyone can read it; a listed approver must be given access to the repository). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(state.pendingApprovals, []);
    assert.equal(
      state.approverIds?.dave,
      undefined,
      "a stranger's account is not pinned to the listed login",
    );
  });

  it("one person approving under two logins (a renamed account) counts once", async () => {
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, twoMerges);
    await approve("carol", { pull: BOB_PR, outcome: "rocket" });
    mockRange(app.mock, twoMerges);
    const again = await approve("carol-new", {
      pull: BOB_PR,
      outcome: "rocket",
      id: 1002,
      userId: userIdOf("carol"),
    });
    assert.match(again, /\(1\/2\); waiting for more approvals\./);
  });

  it("a listed approver's login is pinned, the first time it is needed, to the GitHub account that has it", async () => {
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, twoMerges);
    await approve("erin", { pull: BOB_PR, outcome: "rocket" });
    assert.deepEqual((await rt.reconciler.store.load(instance)).approverIds, { erin: userIdOf("erin") });
    // Pinned: a second approval by the same account asks GitHub nothing more about the login.
    mockRange(app.mock, twoMerges);
    const again = await approve("erin", { pull: BOB_PR, outcome: "rocket", id: 1002, resolves: false });
    assert.match(again, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
  });

  it("a pin is dropped only once the deployed rules stop listing the login, not when a merged config does", async () => {
    await waiting(deployed, bobDocs, "bob");
    // zed was listed when prod deployed (and pinned); the config merged since no longer lists him.
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = { zed: 4_242_001 };
      const rules = s.deployedRules;
      if (rules?.approval) rules.approval = { ...rules.approval, users: [...rules.approval.users, "zed"] };
    });
    mockRange(app.mock, twoMerges);
    await approve("erin", { pull: BOB_PR, outcome: "rocket" });
    assert.equal((await rt.reconciler.store.load(instance)).approverIds?.zed, 4_242_001, "still pinned");
    // Deployed without zed: his pin goes.
    await rt.reconciler.store.update(instance, (s) => {
      s.deployedRules = { revision: deployed, ...guardsOf(rt.reconciler.controller("prod").env) };
    });
    mockRange(app.mock, twoMerges);
    await approve("erin", { pull: BOB_PR, outcome: "rocket", id: 1002, resolves: false });
    assert.equal((await rt.reconciler.store.load(instance)).approverIds?.zed, undefined);
  });

  it("a pin is dropped from every environment state of the repository that holds it, a renamed environment's too", async () => {
    const renamed = instanceName(rt.reconciler.app, "prod-old");
    await waiting(deployed, bobDocs, "bob");
    // zed was pinned when listed (to every environment of the repository); no config lists him now.
    for (const name of [instance, renamed])
      await rt.reconciler.store.update(name, (s) => {
        s.approverIds = { zed: 4_242_001 };
      });
    mockRange(app.mock, twoMerges);
    await approve("erin", { pull: BOB_PR, outcome: "rocket" });
    assert.equal((await rt.reconciler.store.load(instance)).approverIds?.zed, undefined);
    assert.equal((await rt.reconciler.store.load(renamed)).approverIds?.zed, undefined, "no copy binds zed");
  });

  it("another repository whose id starts like this one's (gh_1234 and gh_12345) neither binds nor loses pins here", async () => {
    const tools = instanceName(`${rt.reconciler.app}5`, "prod");
    assert.ok(tools.startsWith(rt.reconciler.app), "the two apps' state names share a prefix");
    await rt.reconciler.store.update(tools, (s) => {
      s.approverIds = { erin: 4_242_555, zed: 4_242_001 };
    });
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, twoMerges);
    const reply = await approve("erin", { pull: BOB_PR, outcome: "rocket" });
    assert.match(
      reply,
      /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/,
      "bound by this repository's pins only",
    );
    assert.deepEqual((await rt.reconciler.store.load(tools)).approverIds, {
      erin: 4_242_555,
      zed: 4_242_001,
    });
    await rt.reconciler.store.update(tools, (s) => {
      s.approverIds = undefined;
    });
  });

  it("someone who registered a listed approver's old login (another GitHub id) is refused, and told why", async () => {
    await waiting(deployed, bobDocs, "bob");
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = { erin: userIdOf("erin") };
    });
    const reply = await approve("erin", {
      pull: BOB_PR,
      userId: 4_242_424,
      permission: "read",
      resolves: false,
      readsPull: false,
    });
    assert.equal(
      reply,
      `Sorry @erin, you cannot approve **prod**: @erin is listed as an approver but is now a different GitHub account (id 4242424; the listed one is id ${userIdOf("erin")}); update approval.users. Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("a listed approver who renamed their account approves under the new login, and is told to update approval.users", async () => {
    await waiting(deployed, bobDocs, "bob");
    await rt.reconciler.store.update(instance, (s) => {
      s.approverIds = { erin: userIdOf("erin") };
    });
    mockRange(app.mock, twoMerges);
    const reply = await approve("erin-renamed", {
      pull: BOB_PR,
      userId: userIdOf("erin"),
      permission: "read",
      outcome: "rocket",
      resolves: false,
    });
    assert.equal(
      reply,
      `Approved \`${bobDocs.slice(0, 7)}\` for **prod** (1/2); waiting for more approvals. (approval.users lists you as @erin, your login before a rename; the approval counts because it is the same GitHub account, but update approval.users to @erin-renamed.)\n\n**Next:** another approver comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    const state = await rt.reconciler.store.load(instance);
    assert.deepEqual(
      state.pendingApprovals.map((a) => ({ by: a.by, id: a.id })),
      [{ by: "erin-renamed", id: userIdOf("erin") }],
    );
  });

  it("whoever pushed a commit written in someone else's name is refused (GitHub's repository activity)", async () => {
    const spoofed = fakeSha("commit claiming carol wrote it");
    await waiting(deployed, spoofed, "alice");
    mockRange(app.mock, {
      base: deployed,
      head: spoofed,
      commits: [{ sha: spoofed, author: "carol", committer: "carol" }],
      pulls: [],
      pushes: [{ after: spoofed, actor: "dave" }],
    });
    const pr: FakePull = {
      number: 5,
      author: "erin",
      mergedBy: "erin",
      commits: [spoofed],
      mergeCommit: spoofed,
    };
    const reply = await approve("dave", { pull: pr });
    assert.match(reply, new RegExp(`you pushed ${spoofed.slice(0, 7)} in what would be deployed`));
  });

  it("without GitHub's repository activity, the commits, pull requests and pusher still decide", async () => {
    await waiting(deployed, bobDocs, "bob");
    mockRange(app.mock, { ...twoMerges, pushes: "forbidden" });
    const refused = await approve("alice", { pull: BOB_PR });
    assert.match(refused, /you authored [0-9a-f]{7}, opened #1, merged #1, 3 more in what would be deployed/);
    mockRange(app.mock, { ...twoMerges, pushes: "forbidden" });
    const approved = await approve("erin", { pull: BOB_PR, outcome: "rocket", id: 1002 });
    assert.match(approved, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
  });

  it("a poll found the commit, the push event has not arrived and the repository activity is unreadable: nobody's approval counts, and the reply says why", async () => {
    await waiting(deployed, bobDocs, "syncward");
    mockRange(app.mock, { ...twoMerges, pushes: "forbidden" });
    const reply = await approve("erin", { pull: BOB_PR });
    assert.equal(
      reply,
      `Sorry @erin, you cannot approve **prod**: cannot tell who pushed \`${bobDocs.slice(0, 7)}\`: GitHub does not show syncward the repository's activity in full (403) and no push event for it has arrived (syncward learned of it by polling), so nobody can be sure they did not push it; grant syncward's GitHub App read access to the repository's activity, or approve after the push event arrives (or set approval.allowAuthor: true). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("once the push event has recorded the pusher, the same approval counts and the pusher's is refused", async () => {
    await waiting(deployed, bobDocs, "syncward");
    // As the reconciler records a push that arrives after the poll: on the wait and in the state.
    await rt.reconciler.store.update(instance, (s) => {
      if (s.pendingSync) s.pendingSync.pusher = "dave";
      s.recentPushes = [{ after: bobDocs, before: deployed, login: "dave" }];
    });
    mockRange(app.mock, { ...twoMerges, pushes: "forbidden" });
    const refused = await approve("dave", { pull: BOB_PR });
    assert.match(refused, /you pushed [0-9a-f]{7} in what would be deployed/);
    mockRange(app.mock, { ...twoMerges, pushes: "forbidden" });
    const approved = await approve("erin", { pull: BOB_PR, outcome: "rocket", id: 1002 });
    assert.match(approved, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
  });

  describe("a person syncward recorded by id renames their account, then approves", () => {
    /** prod waits at Bob's docs, `pending` recorded on the wait; Dave (listed, pinned) approves as @dave-renamed. */
    const renamedDaveApproves = async (pending: Record<string, unknown>, pushes?: "forbidden") => {
      await waiting(deployed, bobDocs, "bob");
      await rt.reconciler.store.update(instance, (s) => {
        if (s.pendingSync) Object.assign(s.pendingSync, pending);
        s.approverIds = { dave: userIdOf("dave") };
      });
      mockRange(app.mock, { ...twoMerges, ...(pushes ? { pushes } : {}) });
      const reply = await approve("dave-renamed", {
        pull: BOB_PR,
        userId: userIdOf("dave"),
        permission: "read",
        resolves: false,
      });
      assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
      return reply;
    };

    it("the pusher is refused", async () => {
      const reply = await renamedDaveApproves(
        { trigger: "poll", actor: "syncward", pusher: "dave", pusherId: userIdOf("dave") },
        "forbidden",
      );
      assert.match(
        reply,
        /^Sorry @dave-renamed, you cannot approve \*\*prod\*\*: you pushed [0-9a-f]{7} in what would be deployed/,
      );
    });

    it("whoever asked for the sync is refused", async () => {
      const reply = await renamedDaveApproves({ manual: true, actor: "dave", actorId: userIdOf("dave") });
      assert.match(
        reply,
        /^Sorry @dave-renamed, you cannot approve \*\*prod\*\*: you requested the sync of [0-9a-f]{7} in what would be deployed/,
      );
    });
  });

  it("a range too long to tell who contributed cannot be approved, and says what to do", async () => {
    await waiting(deployed, bobDocs, "bob");
    app.mock.api
      .get(`${REPO_PATH}/compare/${deployed}...${bobDocs}`)
      .query({ per_page: "100", page: "1" })
      .reply(200, { status: "ahead", total_commits: 501, commits: [] });
    const reply = await approve("erin", { pull: BOB_PR });
    assert.match(
      reply,
      /holds 501 commits; syncward reads at most 500 to tell who contributed, so nobody can approve it: deploy a shorter step/,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("the pusher of the pending revision is refused even without a commit in the range", async () => {
    await waiting(deployed, bobDocs, "erin");
    mockRange(app.mock, twoMerges);
    const reply = await approve("erin", { pull: BOB_PR });
    assert.match(reply, /you pushed [0-9a-f]{7} in what would be deployed/);
  });

  describe("inside the pull requests of the range (squash merges hide them)", () => {
    const daveWork = fakeSha("dave's own work");
    const bobFix = fakeSha("bob's fix pushed into dave's branch");
    const squash = fakeSha("carol squash-merges #3");
    const davePr = (o: Partial<FakePull> = {}): FakePull => ({
      number: 3,
      author: "dave",
      mergedBy: "carol",
      commits: [squash],
      mergeCommit: squash,
      own: [
        { sha: daveWork, author: "dave", committer: "dave" },
        { sha: bobFix, author: "bob", committer: "bob" },
      ],
      branch: [
        { after: bobFix, actor: "bob" },
        { after: daveWork, actor: "dave", kind: "branch_creation" },
      ],
      ...o,
    });
    // main holds one commit, written in Dave's name by GitHub's squash.
    const squashed = (pr: FakePull, message?: string) => ({
      base: deployed,
      head: squash,
      commits: [{ sha: squash, author: "dave", ...(message ? { message } : {}) }],
      pulls: [pr],
      pushes: [{ after: squash, actor: "carol", kind: "pr_merge" }],
    });

    it("Bob pushed into Dave's PR, Carol squash-merged it: Bob is refused (the PR's own commits, its branch's pushes)", async () => {
      await waiting(deployed, squash, "carol");
      const pr = davePr();
      mockRange(app.mock, squashed(pr));
      const reply = await approve("bob", { pull: pr });
      assert.equal(
        reply,
        `Sorry @bob, you cannot approve **prod**: you authored ${bobFix.slice(0, 7)} in #3, committed ${bobFix.slice(0, 7)} in #3, pushed to #3 in what would be deployed (\`${deployed.slice(0, 7)}..${squash.slice(0, 7)}\`), and nobody who contributed to a change approves its deployment (approval.allowAuthor is false). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
      );
      assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
    });

    it("a commit written in the PR author's name and pushed by someone else: the pusher is refused", async () => {
      await waiting(deployed, squash, "carol");
      const pr = davePr({
        own: [
          { sha: daveWork, author: "dave", committer: "dave" },
          { sha: bobFix, author: "dave", committer: "dave" },
        ],
      });
      mockRange(app.mock, squashed(pr));
      const reply = await approve("bob", { pull: pr });
      assert.match(
        reply,
        /^Sorry @bob, you cannot approve \*\*prod\*\*: you pushed to #3 in what would be deployed/,
      );
      mockRange(app.mock, squashed(pr));
      const erin = await approve("erin", { pull: pr, outcome: "rocket", id: 1002 });
      assert.match(
        erin,
        /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/,
        "someone who did nothing approves",
      );
    });

    it("a co-author named by GitHub's noreply address is refused; one no account is tied to stops every approval, named", async () => {
      await waiting(deployed, squash, "carol");
      const pr = davePr({ own: [{ sha: daveWork, author: "dave", committer: "dave" }], branch: undefined });
      const bobId = userIdOf("bob");
      mockRange(
        app.mock,
        squashed(pr, `Change (#3)\n\nCo-authored-by: Bobby <${bobId}+bob@users.noreply.github.com>`),
      );
      const bob = await approve("bob", { pull: pr });
      assert.match(bob, new RegExp(`you co-authored ${squash.slice(0, 7)} in what would be deployed`));
      mockRange(app.mock, squashed(pr, "Change (#3)\n\nCo-authored-by: Eve <eve@elsewhere.example>"));
      const erin = await approve("erin", { pull: pr });
      assert.match(
        erin,
        /^Sorry @erin, you cannot approve \*\*prod\*\*: the co-author <eve@elsewhere\.example>, whom no GitHub account is tied to, co-authored [0-9a-f]{7} in what would be deployed, so syncward cannot tell who contributed/,
      );
      assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
    });

    it("a pull request from a long-lived branch: its activity is read back to where the branch stood before its commits, not to its creation", async () => {
      await waiting(deployed, squash, "carol");
      const before = fakeSha("develop before #3");
      const pr = davePr({
        own: [
          { sha: daveWork, author: "dave", committer: "dave", parents: [before] },
          { sha: bobFix, author: "dave", committer: "dave", parents: [daveWork] },
        ],
        branch: [{ after: bobFix, actor: "bob" }],
        branchFrom: before,
        branchMore: true,
      });
      mockRange(app.mock, squashed(pr));
      const bob = await approve("bob", { pull: pr });
      assert.match(
        bob,
        /^Sorry @bob, you cannot approve \*\*prod\*\*: you pushed to #3 in what would be deployed/,
      );
      mockRange(app.mock, squashed(pr));
      const erin = await approve("erin", { pull: pr, outcome: "rocket", id: 1002 });
      assert.match(erin, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
    });

    it("who pushed to a PR's branch cannot be read: nobody's approval counts, and the reply names what", async () => {
      await waiting(deployed, squash, "carol");
      const pr = davePr({ branch: "forbidden" });
      mockRange(app.mock, squashed(pr));
      const reply = await approve("erin", { pull: pr });
      assert.equal(
        reply,
        `Sorry @erin, you cannot approve **prod**: cannot read who pushed to #3's branch acme/shop:feature-3 (repository activity: 403), so nobody can be sure they did not contribute (or set approval.allowAuthor: true). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
      );
    });
  });

  it("a range made entirely by github-actions[bot]: the person behind the bot is unknown, Mallory is refused", async () => {
    const botCommit = fakeSha("workflow bumps the image");
    await waiting(deployed, botCommit, "github-actions[bot]");
    mockRange(app.mock, {
      base: deployed,
      head: botCommit,
      commits: [{ sha: botCommit, author: "github-actions[bot]", committer: "github-actions[bot]" }],
      pulls: [],
      pushes: [{ after: botCommit, actor: "github-actions[bot]" }],
    });
    const pr: FakePull = {
      number: 6,
      author: "erin",
      mergedBy: "erin",
      commits: [botCommit],
      mergeCommit: botCommit,
    };
    const reply = await approve("mallory", { pull: pr });
    assert.match(
      reply,
      /^Sorry @mallory, you cannot approve \*\*prod\*\*: @github-actions\[bot\] \(a bot: it acts for whoever triggered it\) authored [0-9a-f]{7}, committed [0-9a-f]{7}, pushed [0-9a-f]{7} in what would be deployed, so syncward cannot tell who contributed/,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  it("a Dependabot pull request, with dependabot[bot] in approval.trustedBots: it hides nobody; its merger is still refused and anyone else counts", async () => {
    const bump = fakeSha("bump nginx to 1.27.3");
    await waiting(deployed, bump, "carol");
    const pr: FakePull = {
      number: 8,
      author: "dependabot[bot]",
      mergedBy: "carol",
      commits: [bump],
      mergeCommit: bump,
      own: [{ sha: bump, author: "dependabot[bot]", committer: "dependabot[bot]" }],
      branch: [{ after: bump, actor: "dependabot[bot]", kind: "branch_creation" }],
    };
    const range = {
      base: deployed,
      head: bump,
      commits: [{ sha: bump, author: "dependabot[bot]", committer: "web-flow" }],
      pulls: [pr],
      pushes: [{ after: bump, actor: "carol", kind: "pr_merge" }],
    };
    mockRange(app.mock, range);
    const carol = await approve("carol", { pull: pr });
    assert.match(carol, /^Sorry @carol, you cannot approve \*\*prod\*\*: you merged #8/);
    mockRange(app.mock, range);
    const erin = await approve("erin", { pull: pr, outcome: "rocket", id: 1002 });
    assert.match(erin, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
  });

  it("three pages of activity that do not reach the last synced revision count as unreadable: the pusher on page 4 is refused", async () => {
    await waiting(deployed, bobDocs, "syncward");
    // Mallory's push of Alice's commit would be on page 4.
    mockRange(app.mock, { ...twoMerges, pushes: threePagesOfBobsMerge });
    const reply = await approve("mallory", { pull: BOB_PR });
    assert.equal(
      reply,
      `Sorry @mallory, you cannot approve **prod**: cannot tell who pushed \`${bobDocs.slice(0, 7)}\`: GitHub does not show syncward the repository's activity in full (it does not reach the last synced revision ${deployed.slice(0, 7)} within 3 pages) and no push event for it has arrived (syncward learned of it by polling), so nobody can be sure they did not push it; grant syncward's GitHub App read access to the repository's activity, or approve after the push event arrives (or set approval.allowAuthor: true). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
    );
    assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
  });

  describe("the activity does not reach the last synced revision, and a push event was recorded for the head", () => {
    // Mallory pushed M straight to main, written as Alice; Bob merged his docs on top. The activity
    // shows Bob's merge on page 1 and Mallory's push only on page 4, which syncward does not read.
    const malloryDirect = fakeSha("mallory's direct push, written as alice");
    const behindDocs = () =>
      mockRange(app.mock, {
        base: deployed,
        head: bobDocs,
        commits: [
          { sha: malloryDirect, author: "alice", committer: "alice" },
          { sha: bobDocs, author: "bob" },
        ],
        pulls: [BOB_PR],
        pushes: threePagesOfBobsMerge,
      });

    it("only Bob's push was recorded, so who pushed M is unknown: Mallory is refused, and the reply says why", async () => {
      await waiting(deployed, bobDocs, "bob", [{ after: bobDocs, before: malloryDirect, login: "bob" }]);
      behindDocs();
      const reply = await approve("mallory", { pull: BOB_PR });
      assert.equal(
        reply,
        `Sorry @mallory, you cannot approve **prod**: cannot tell who pushed every commit of \`${deployed.slice(0, 7)}..${bobDocs.slice(0, 7)}\`: GitHub does not show syncward the repository's activity in full (it does not reach the last synced revision ${deployed.slice(0, 7)} within 3 pages), and the push events syncward recorded do not lead back to the last synced revision (none moved the branch to \`${malloryDirect.slice(0, 7)}\`), so whoever pushed the commits before it could be approving them; grant syncward's GitHub App read access to the repository's activity (or set approval.allowAuthor: true). Nothing was changed.\n\n**Next:** someone else who may approve comments \`/approve prod\`; \`/help\` lists who may.`,
      );
      assert.deepEqual((await rt.reconciler.store.load(instance)).pendingApprovals, []);
    });

    it("the recorded pushes lead back to it: Mallory, who pushed M, is refused; Erin, who did nothing, approves", async () => {
      await waiting(deployed, bobDocs, "bob", [
        { after: malloryDirect, before: deployed, login: "mallory", id: userIdOf("mallory") },
        { after: bobDocs, before: malloryDirect, login: "bob" },
      ]);
      behindDocs();
      const mallory = await approve("mallory", { pull: BOB_PR });
      assert.match(
        mallory,
        new RegExp(
          `^Sorry @mallory, you cannot approve \\*\\*prod\\*\\*: you pushed ${malloryDirect.slice(0, 7)} in what would be deployed`,
        ),
      );
      behindDocs();
      const erin = await approve("erin", { pull: BOB_PR, outcome: "rocket", id: 1002 });
      assert.match(erin, /^Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
    });
  });
});
