// The syncward app dying in the middle of a sync and a new instance taking over, on the real
// cluster, in one process: instance A's cluster connection dies at the moment it would apply
// (after it told GitHub the deployment started), as a killed process's would; instance B starts
// like a restarted pod (bootstrap over the installed repositories) against the same state
// namespace and the same GitHub, which still holds A's deployments. B converges to the branch
// head, reuses A's deployments instead of making second ones, counts the approval given to A and
// keeps the freeze set through A.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeConnectionError } from "../../src/kube/errors.ts";
import { bootstrapAsRestarted, startApp, type TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { commentOnPull, mockMergedPull } from "../support/pull-comments.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("the app killed mid-sync and restarted", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let stateNs: string;
  const ns: Record<"web" | "stage" | "prod", string> = { web: "", stage: "", prod: "" };
  let c1: string;
  let c2: string;
  let a: TestApp;
  let b: TestApp | undefined;
  let aClient: KubeClient;

  const live = async (env: keyof typeof ns) =>
    (
      (await cluster.client.get("v1", "ConfigMap", ns[env], "settings")) as
        | { data?: { v?: string } }
        | undefined
    )?.data?.v;

  /** The pull request whose merge produced `c1`, which approvers comment on. */
  const mockPullRequest = (app: TestApp) => mockMergedPull(app, () => [c1]);

  // Each approver approves once here: their listed login is pinned to their GitHub account.
  const comment = (app: TestApp, id: number, login: string, body: string) =>
    commentOnPull(app, id, login, body);

  before(async () => {
    ns.web = await cluster.namespace("ghr-web");
    ns.stage = await cluster.namespace("ghr-stage");
    ns.prod = await cluster.namespace("ghr-prod");
    stateNs = await cluster.stateNamespace("ghr-state");
    repo = makeRepo({ "web/cm.yaml": cm("1"), "stage/cm.yaml": cm("1"), "prod/cm.yaml": cm("1") });
    c1 = repo.head();
    repo.git("branch", "release");
    github = new FakeGitHub(
      repo,
      `environments:
  - name: web
    source: {path: web}
    destination: {namespace: ${ns.web}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
  - name: stage
    source: {path: stage}
    destination: {namespace: ${ns.stage}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
  - name: prod
    source: {path: prod, branch: release}
    destination: {namespace: ${ns.prod}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
    approval: {users: [carol, dave], minimum: 2}
`,
    );
    aClient = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    a = await startApp({ client: aClient, stateNamespace: stateNs });
    github.install(a.mock);
    mockPullRequest(a);
  });

  after(async () => {
    for (const rt of b?.parts.runtimes.all() ?? []) {
      await rt.stop();
      rt.reporter.close();
    }
    b?.mock.assertDone();
    aClient.close();
  });

  /** Syncs web and stage, holds prod for approval (carol approves, 1/2), freezes stage, dies applying the next commit. */
  const instanceA = async () => {
    await a.probot.receive(
      pushEvent({
        after: c1,
        before: "0".repeat(40),
        modified: ["web/cm.yaml", "stage/cm.yaml"],
        sender: { login: "alice" },
      }),
    );
    a.parts.runtimes.all()[0]!.reconciler.controller("prod").nudge("push", "alice");
    await a.settle();
    assert.equal(await live("web"), "1");
    assert.equal(await live("stage"), "1");
    assert.equal(await live("prod"), undefined, "prod waits for two approvals");

    await comment(a, 2001, "carol", "/approve prod");
    assert.match(github.comments.at(-1)?.body ?? "", /Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/2\)/);
    await comment(a, 2002, "alice", '/freeze stage "release night"');
    assert.match(github.comments.at(-1)?.body ?? "", /\*\*stage\*\* is frozen by @alice/);

    // The next commit: A dies at its first write to web, once GitHub shows the deployment started.
    c2 = repo.commit({ "web/cm.yaml": cm("2"), "stage/cm.yaml": cm("2") }, "two");
    const deployedC2 = () => github.deployments.find((d) => d.environment === "web" && d.ref === c2);
    let dead = false;
    const request = aClient.request.bind(aClient);
    aClient.request = (async (method: string, path: string, options?: object) => {
      if (
        !dead &&
        method === "PATCH" &&
        path.includes(`/namespaces/${ns.web}/`) &&
        !path.includes("dryRun")
      ) {
        await eventually("A to report the deployment in progress", async () => {
          const d = deployedC2();
          return (
            d !== undefined && github.statuses.some((s) => s.deployment === d.id && s.state === "in_progress")
          );
        });
        dead = true;
        for (const rt of a.parts.runtimes.all()) rt.reporter.close();
      }
      if (dead) throw new KubeConnectionError("syncward was killed", "ECONNRESET");
      return request(method, path, options);
    }) as typeof aClient.request;

    await a.probot.receive(
      pushEvent({
        after: c2,
        before: c1,
        modified: ["web/cm.yaml", "stage/cm.yaml"],
        sender: { login: "alice" },
      }),
    );
    await a.settle();
    for (const rt of a.parts.runtimes.all()) await rt.stop();
    a.mock.reset();
    assert.ok(dead, "A died mid-sync");
    assert.equal(await live("web"), "1", "A died before it changed web");
    assert.equal(github.deployments.filter((d) => d.environment === "web" && d.ref === c2).length, 1);
  };

  /** Converges to the branch head, reuses A's deployments, counts carol's approval, keeps the freeze. */
  const instanceB = async () => {
    b = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs, autoStart: true });
    github.install(b.mock);
    mockPullRequest(b);
    const started = await bootstrapAsRestarted(b);
    assert.deepEqual(started, ["acme/shop"]);
    // The app's environments start once its state is checked for a move from older names
    // (identity-upgrade.ts), which is asynchronous: wait for B's first sync, then for its reports.
    await eventually(
      "B synced the commit A died applying",
      async () => (await live("web")) === "2" || undefined,
    );
    await b.settle();

    assert.equal(await live("web"), "2", "B synced the commit A died applying");
    const web = github.deployments.filter((d) => d.environment === "web");
    assert.deepEqual(
      web.map((d) => d.ref),
      [c1, c2],
      "one deployment per commit: B reused A's deployment of the commit A died on",
    );
    assert.equal(github.statuses.filter((s) => s.deployment === web[1]!.id).at(-1)?.state, "success");

    assert.equal(await live("stage"), "1", "the freeze set through A still holds");
    const stage = b.parts.runtimes.all()[0]!.reconciler;
    assert.equal((await stage.store.load(stage.controller("stage").instance)).freeze?.by, "alice");

    assert.equal(await live("prod"), undefined, "one approval of two is not enough");
    await comment(b, 2003, "dave", "/approve prod");
    assert.match(
      github.comments.at(-1)?.body ?? "",
      /Approved `[0-9a-f]{7}` for \*\*prod\*\* \(2\/2\); deploying\./,
      "carol's approval, given to A, still counts",
    );
    await b.settle();
    assert.equal(await live("prod"), "1");
    const prod = github.deployments.filter((d) => d.environment === "prod");
    assert.equal(prod.length, 1, "the deployment A queued for approval is the one B finishes");
    assert.deepEqual(
      github.statuses.filter((s) => s.deployment === prod[0]!.id).map((s) => s.state),
      ["queued", "in_progress", "success"],
    );
  };

  // One test: B's checks mean nothing without A having run first (and a name filter could pick B alone).
  it("instance A dies applying a commit; instance B, started like a restarted pod, finishes A's work", async () => {
    await instanceA();
    await instanceB();
  });
});
