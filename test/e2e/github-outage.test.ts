// GitHub failing under a running syncward, on the real cluster: the Octokit is production's
// (plugin-retry and plugin-throttling on, waits shortened), GitHub a stateful fake behind the
// strict nock mock. The cluster never waits for GitHub; what GitHub missed reaches it later.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { startApp, type TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { rateLimitWaits } from "../support/github.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("GitHub failing while syncward runs", () => {
  let app: TestApp;
  let repo: TestRepo;
  let github: FakeGitHub;
  let ns: string;

  const live = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "settings")) as { data?: { v?: string } } | undefined)
      ?.data?.v;
  const push = (after: string, before: string) =>
    app.probot.receive(pushEvent({ after, before, modified: ["web/cm.yaml"], sender: { login: "alice" } }));
  const runtime = () => app.parts.runtimes.all()[0]!;

  before(async () => {
    ns = await cluster.namespace("gho-web");
    const stateNs = await cluster.stateNamespace("gho-state");
    repo = makeRepo({ "web/cm.yaml": cm("1") });
    github = new FakeGitHub(
      repo,
      `environments:
  - name: web
    source: {path: web}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`,
    );
    app = await startApp({
      client: cluster.syncwardClient,
      stateNamespace: stateNs,
      resilient: true,
      reportRetryMs: { initial: 20, max: 200 },
    });
    github.install(app.mock);
  });

  beforeEach(() => {
    rateLimitWaits.length = 0;
  });

  after(async () => {
    for (const rt of app.parts.runtimes.all()) {
      await rt.stop();
      rt.reporter.close();
    }
    // No request without an answer, none GitHub would reject.
    app.mock.assertDone();
  });

  it("GitHub answering 502/503 during a push: the cluster syncs and heals anyway; check runs and deployments arrive, in order, once GitHub is back", async () => {
    github.outage = true;
    const first = repo.head();
    await push(first, "0".repeat(40));
    await app.settle();
    assert.equal(await live(), "1", "synced while GitHub was down");

    const second = repo.commit({ "web/cm.yaml": cm("2") }, "two");
    await push(second, first);
    await app.settle();
    assert.equal(await live(), "2", "the next push synced too");

    // Drift made by hand is healed while GitHub is still down.
    await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/settings`, {
      body: { data: { v: "hand-edited" } },
      contentType: "application/merge-patch+json",
    });
    runtime().reconciler.controller("web").nudge("selfHeal", "syncward");
    await app.settle();
    assert.equal(await live(), "2", "self-heal did not wait for GitHub");

    const history = (await runtime().reconciler.store.load(runtime().reconciler.controller("web").instance))
      .history;
    assert.deepEqual(
      history.map((h) => [h.revision, h.trigger, h.result]),
      [
        [first, "push", "Succeeded"],
        [second, "push", "Succeeded"],
        [second, "selfHeal", "Succeeded"],
      ],
    );
    assert.equal(github.checks.length + github.deployments.length + github.statuses.length, 0);
    assert.ok(runtime().reporter.backlog > 0, "reports wait for GitHub");
    // Octokit sent each request four times (plugin-retry's 3 retries) before the report waited.
    assert.ok(github.refused >= 4, `GitHub refused ${github.refused} requests`);

    github.outage = false;
    await eventually("the reports to catch up", async () => runtime().reporter.backlog === 0);
    await app.settle();

    // One run per commit: the self-heal at the second commit updates that commit's run.
    const checks = github.checks.filter((c) => c.name === "syncward / web");
    assert.deepEqual(
      checks.map((c) => [c.head_sha, c.conclusion]),
      [
        [first, "success"],
        [second, "success"],
      ],
      "every commit's check run, in order",
    );
    assert.match(checks[1]?.output?.summary ?? "", /Self-heal reverted out-of-band changes/);
    assert.deepEqual(
      github.deployments.map((d) => [d.environment, d.ref]),
      [
        ["web", first],
        ["web", second],
      ],
      "one deployment per commit, none lost, none doubled",
    );
    const [d1, d2] = github.deployments;
    const last = (id: number) => github.statuses.filter((s) => s.deployment === id).at(-1)?.state;
    assert.equal(last(d1!.id), "success");
    assert.equal(last(d2!.id), "success");
    const order = github.statuses.map((s) => s.deployment);
    assert.ok(
      order.lastIndexOf(d1!.id) < order.indexOf(d2!.id),
      "the older commit's statuses come first, so the newest deployment stays the active one",
    );
  });

  it("a short blip (502, then 503) is retried by Octokit: the report arrives without waiting", async () => {
    const third = repo.commit({ "web/cm.yaml": cm("3") }, "three");
    github.failNext.push([502, { message: "Bad Gateway" }], [503, { message: "Service Unavailable" }]);
    const refused = github.refused;
    await push(third, repo.git("rev-parse", "HEAD~1"));
    await app.settle();
    assert.equal(await live(), "3");
    assert.equal(github.refused - refused, 2);
    assert.equal(runtime().reporter.backlog, 0);
    assert.deepEqual(
      github.checks.filter((c) => c.head_sha === third).map((c) => c.conclusion),
      ["success"],
    );
    assert.deepEqual(github.statesOf("web").slice(-2), ["in_progress", "success"]);
  });

  it("a secondary rate limit (429 with retry-after) and a primary one (403, x-ratelimit-remaining 0) are waited out as GitHub says", async () => {
    const fourth = repo.commit({ "web/cm.yaml": cm("4") }, "four");
    // An hour away, as a spent quota's reset may be; the test Octokit waits a millisecond a second.
    const reset = Math.floor(Date.now() / 1000) + 3600;
    github.failNext.push(
      [
        429,
        {
          message:
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        },
        { "retry-after": "7" },
      ],
      [
        403,
        { message: "API rate limit exceeded for installation ID 1." },
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset), "x-ratelimit-limit": "5000" },
      ],
    );
    await push(fourth, repo.git("rev-parse", "HEAD~1"));
    await app.settle();
    assert.equal(await live(), "4");
    assert.equal(rateLimitWaits[0]?.kind, "secondary");
    assert.equal(rateLimitWaits[0]?.retryAfter, 7, "retry-after honoured (7 s; shortened to 7 ms in tests)");
    assert.equal(rateLimitWaits[1]?.kind, "primary");
    const primary = rateLimitWaits[1];
    // The plugin waits from when it read the answer until the reset, rounded up, and a second more.
    const untilReset = reset - (primary?.at ?? 0) / 1000;
    const wait = primary?.retryAfter ?? -1;
    assert.ok(Math.abs(wait - 1 - untilReset) <= 1, `waited ${wait} s for a reset ${untilReset} s away`);
    assert.equal(runtime().reporter.backlog, 0);
    assert.deepEqual(
      github.checks.filter((c) => c.head_sha === fourth).map((c) => c.conclusion),
      ["success"],
    );
    assert.deepEqual(github.statesOf("web").slice(-2), ["in_progress", "success"]);
  });

  it("GitHub failing to serve the commit's tarball is no render failure: nothing is misreported, and the next pass syncs", async () => {
    const fifth = repo.commit({ "web/cm.yaml": cm("5") }, "five");
    const checks = github.checks.length;
    const rt = runtime();
    const instance = rt.reconciler.controller("web").instance;
    const entries = (await rt.reconciler.store.load(instance)).history.length;
    github.sourceOutage = true;
    await push(fifth, repo.git("rev-parse", "HEAD~1"));
    await app.settle();
    assert.equal(await live(), "4", "nothing applied without the commit's files");
    const state = await rt.reconciler.store.load(instance);
    assert.equal(state.history.length, entries, "no history entry blames the manifests");
    assert.equal(state.lastError, undefined);
    assert.equal(github.checks.length, checks, "no failing check run on the commit");

    github.sourceOutage = false;
    rt.reconciler.controller("web").nudge("poll", "syncward");
    await app.settle();
    assert.equal(await live(), "5");
    assert.deepEqual(
      github.checks.filter((c) => c.head_sha === fifth).map((c) => c.conclusion),
      ["success"],
    );
  });
});
