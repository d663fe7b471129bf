// CI finishing wakes an environment held for its checks (requireChecks), on the real cluster: a
// push waits while `ci` is still running; GitHub's check_suite.completed for the commit deploys it
// at once, without a poll (polling is off here and the configured interval is an hour). Another
// repository's suite, or syncward's own, wakes nothing.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mockConfig, mockNoEarlierDeployments, REPO_PATH, startApp, type TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { GITHUB_API, type GitHubMock } from "../support/github.ts";
import { type CheckRun, captureReports, mockTarball } from "../support/github-checks.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { Replicas, runTestRepository } from "../support/replicas.ts";
import { checkSuiteCompletedEvent, pushEvent, repoIdOf, statusEvent } from "../support/webhooks.ts";

const cluster = useCluster();
/** The app of acme/shop: its GitHub id (a rename keeps it). */
const APP = `gh_${repoIdOf("acme/shop")}`;

const cm = (v: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {release: "${v}"}\n`;

/** prod waits for `ci`, and polls only once an hour. */
const prodConfig = (ns: string) => `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
    pollInterval: 1h
    requireChecks: [ci]
`;

const live = async (ns: string) =>
  (
    (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as
      | { data: { release: string } }
      | undefined
  )?.data.release;

/** GitHub's answer for the checks on `sha`: the check run `ci` as it stands, no commit statuses. */
function mockCiRun(mock: GitHubMock, sha: string, status: "in_progress" | "completed"): void {
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/check-runs`)
    .query(true)
    .reply(200, {
      total_count: 1,
      check_runs: [
        { id: 31, name: "ci", head_sha: sha, status, conclusion: status === "completed" ? "success" : null },
      ],
    });
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/status`)
    .query(true)
    .reply(200, { state: "pending", sha, total_count: 0, statuses: [] });
}

/** GitHub's answer for the checks on `sha`: no check runs, the commit status `ci` in `state`. */
function mockCiStatus(mock: GitHubMock, sha: string, state: "pending" | "success"): void {
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/check-runs`)
    .query(true)
    .reply(200, { total_count: 0, check_runs: [] });
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/status`)
    .query(true)
    .reply(200, {
      state,
      sha,
      total_count: 1,
      statuses: [{ context: "ci", state, id: 5, description: null, target_url: null }],
    });
}

describe("checks finishing wake an environment that waits for them", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  let head: string;
  const runs: CheckRun[] = [];
  const statuses: string[] = [];

  before(async () => {
    ns = await cluster.namespace("checks-wake");
    const stateNs = await cluster.stateNamespace("checks-wake-state");
    repo = makeRepo({ "prod/app.yaml": cm("1.0") });
    head = repo.head();
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(app.mock, prodConfig(ns));
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  /** The reports: every check run as it stands after its updates, every deployment status. */
  const mockReports = () => captureReports(app.mock, { runs, statuses }, 78, "optionally");

  it("a push waits while ci is still running, and says so", async () => {
    mockReports();
    mockTarball(app.mock, repo, head);
    mockCiRun(app.mock, head, "in_progress");
    await app.probot.receive(
      pushEvent({
        after: head,
        before: "0".repeat(40),
        modified: ["prod/app.yaml"],
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
    assert.equal(await live(ns), undefined, "nothing deployed while ci runs");
    const run = runs.find((r) => r.name === "syncward / prod" && r.head_sha === head);
    assert.match(run?.output?.title ?? "", /waiting for checks to pass on .*: ci/);
  });

  it("syncward's own suite completing wakes nothing", async () => {
    // Who syncward is, asked once (no APP_ID here: the test app is authenticated by token).
    app.mock.api.get("/app").reply(200, { id: 4711, slug: "syncward-test", name: "syncward-test" });
    await app.probot.receive(
      checkSuiteCompletedEvent({ headSha: head, app: { id: 4711, slug: "syncward-test" } }),
    );
    await app.settle();
    app.mock.assertDone(); // no check-runs read: no pass asked the gate
    assert.equal(await live(ns), undefined);
  });

  it("another repository's suite wakes nothing here", async () => {
    await app.probot.receive(checkSuiteCompletedEvent({ repo: "other", headSha: head }));
    await app.settle();
    app.mock.assertDone();
    assert.equal(await live(ns), undefined);
  });

  it("ci completing deploys the commit at once, without a poll", async () => {
    mockReports();
    mockCiRun(app.mock, head, "completed");
    mockNoEarlierDeployments(app.mock, "prod"); // the first deployment of prod
    await app.probot.receive(checkSuiteCompletedEvent({ headSha: head }));
    await app.settle();

    assert.equal(await live(ns), "1.0");
    assert.deepEqual(statuses, ["in_progress", "success"]);
    const done = runs.filter((r) => r.name === "syncward / prod" && r.head_sha === head).at(-1);
    assert.equal(done?.conclusion, "success");
  });

  it("a commit status settling wakes it too: a pending one does not", async () => {
    const next = repo.commit({ "prod/app.yaml": cm("2.0") });
    mockReports();
    mockTarball(app.mock, repo, next);
    mockCiStatus(app.mock, next, "pending");
    await app.probot.receive(
      pushEvent({ after: next, before: head, modified: ["prod/app.yaml"], sender: { login: "alice" } }),
    );
    await app.probot.receive(statusEvent({ sha: next, state: "pending" }));
    await app.settle();
    app.mock.assertDone(); // the pending status asked nothing more
    assert.equal(await live(ns), "1.0", "held while ci is pending");

    mockReports();
    mockCiStatus(app.mock, next, "success");
    await app.probot.receive(statusEvent({ sha: next, state: "success" }));
    await app.settle();
    app.mock.assertDone();
    assert.equal(await live(ns), "2.0");
  });
});

describe("checks finishing, delivered to the replica without the Lease", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let ns: string;
  let stateNs: string;
  let ciDone = false;

  let replicas: Replicas;

  /** A replica of the app; GitHub answers the checks of any commit with `ci` as it stands. */
  const replica = async (identity: string) => {
    const app = await replicas.start(identity);
    const api = app.mock.scope(GITHUB_API).persist();
    api
      .get(/\/repos\/acme\/shop\/commits\/[0-9a-f]{40}\/check-runs$/)
      .query(true)
      .optionally()
      .reply((uri) => {
        const sha = uri.split("/").at(-2) as string;
        const status = ciDone ? "completed" : "in_progress";
        const run = { id: 31, name: "ci", head_sha: sha, status, conclusion: ciDone ? "success" : null };
        return [200, { total_count: 1, check_runs: [run] }];
      });
    api
      .get(/\/repos\/acme\/shop\/commits\/[0-9a-f]{40}\/status$/)
      .query(true)
      .optionally()
      .reply((uri) => [200, { state: "pending", sha: uri.split("/").at(-2), total_count: 0, statuses: [] }]);
    api.get("/app").optionally().reply(200, { id: 4711, slug: "syncward-test", name: "syncward-test" });
    return app;
  };

  before(async () => {
    ns = await cluster.namespace("checks-wake-rep");
    stateNs = await cluster.stateNamespace("checks-wake-rep-state");
    repo = makeRepo({ "prod/app.yaml": cm("1.0") });
    github = new FakeGitHub(repo, prodConfig(ns));
    replicas = new Replicas(cluster.syncwardKubeconfig, stateNs, github);
  });

  after(() => replicas.stop());

  it("is handed to the replica that holds it, which deploys the commit without a poll", async () => {
    const a = await replica("replica-a");
    const head = repo.head();
    await a.probot.receive(
      pushEvent({ after: head, modified: ["prod/app.yaml"], sender: { login: "alice" } }),
    );
    await eventually("replica-a to take the repository and hold the commit for ci", async () =>
      github.checks.some(
        (c) => c.head_sha === head && /waiting for checks to pass/.test(c.output?.title ?? ""),
      ),
    );
    const b = await replica("replica-b");
    // B runs the repository as a restarted pod does (bootstrap), and finds it held by A.
    const rtB = await runTestRepository(b);
    await eventually("replica-b to stand by", async () => rtB.reconciler.following);
    await a.settle();
    assert.equal(await live(ns), undefined, "held while ci runs");

    ciDone = true;
    await b.probot.receive(checkSuiteCompletedEvent({ headSha: head }));
    await eventually("replica-a to deploy the commit", async () => (await live(ns)) === "1.0");
    assert.deepEqual(rtB.reconciler.active, [], "replica-b wrote nothing");
    const rtA = a.parts.runtimes.all()[0];
    const state = await eventually("recorded by replica-a", async () => {
      const s = await rtA?.reconciler.store.load(`${APP}.prod`);
      return s?.lastSyncedRevision === head ? s : undefined;
    });
    assert.deepEqual(
      [state.history.at(-1)?.trigger, state.history.at(-1)?.actor],
      ["push", "alice"],
      "deployed as alice's push, which was waiting for ci",
    );
  });
});
