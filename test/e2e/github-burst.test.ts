// A burst of 200 webhook deliveries on the real cluster: pushes of five commits (each delivered
// four times under one delivery id, and one of them again late under a new id, as GitHub may),
// and pull-request comments (chatter, `/help` commands, redeliveries). The app must not crash,
// must act on each delivery once, must end on the newest commit, and the reconciler's coalescing
// must keep it to at most two syncs per environment.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EmitterWebhookEvent } from "@octokit/webhooks";
import { RecentDeliveries } from "../../src/github/app.ts";
import { startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { GITHUB_API, validateAgainstOpenApi } from "../support/github.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { issueCommentEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("a burst of webhook deliveries", () => {
  let app: TestApp;
  let repo: TestRepo;
  let github: FakeGitHub;
  const ns = { dev: "", stage: "" };

  before(async () => {
    ns.dev = await cluster.namespace("ghb-dev");
    ns.stage = await cluster.namespace("ghb-stage");
    const stateNs = await cluster.stateNamespace("ghb-state");
    repo = makeRepo({ "dev/cm.yaml": cm("1"), "stage/cm.yaml": cm("1") });
    github = new FakeGitHub(
      repo,
      `environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: ${ns.dev}}
    syncPolicy: {automated: {prune: true}}
    revisionHistoryLimit: 50
  - name: stage
    source: {path: stage}
    destination: {namespace: ${ns.stage}}
    syncPolicy: {automated: {prune: true}}
    revisionHistoryLimit: 50
`,
    );
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    github.install(app.mock);
    // GitHub's OpenAPI description (~70 MB) loads on the first request: before the heap is measured.
    validateAgainstOpenApi("GET", "/repos/{owner}/{repo}", undefined, { owner: "acme", repo: "shop" });
    // `/help` comments: acknowledged with reactions, answered with the help.
    const api = app.mock.scope(GITHUB_API).persist();
    api
      .post(/\/repos\/acme\/shop\/issues\/comments\/\d+\/reactions$/)
      .optionally()
      .reply(201, { id: 1, content: "eyes" });
    api
      .get(/\/repos\/acme\/shop\/collaborators\/[^/]+\/permission$/)
      .optionally()
      .reply(200, (uri) => ({
        permission: "write",
        role_name: "write",
        user: { login: uri.split("/").at(-2) },
      }));
  });

  after(async () => {
    for (const rt of app.parts.runtimes.all()) {
      await rt.stop();
      rt.reporter.close();
    }
    app.mock.assertDone();
  });

  it("200 deliveries (pushes of 5 commits, a late one, comments, duplicates): no crash, each acted on once, the newest commit deployed with at most 2 syncs per environment", async (t) => {
    const commits = [repo.head()];
    for (let v = 2; v <= 5; v++)
      commits.push(repo.commit({ "dev/cm.yaml": cm(`${v}`), "stage/cm.yaml": cm(`${v}`) }));
    const push = (i: number) =>
      pushEvent({
        after: commits[i],
        before: i === 0 ? "0".repeat(40) : commits[i - 1],
        modified: ["dev/cm.yaml", "stage/cm.yaml"],
        sender: { login: "alice" },
      });

    const deliveries: EmitterWebhookEvent[] = [];
    const comments: EmitterWebhookEvent[] = [];
    for (let n = 0; n < 149; n++) {
      const body = n % 15 === 0 ? "/help" : `looks good to me (${n})`;
      comments.push(
        issueCommentEvent({ body, commentId: 30_000 + n, sender: { login: `reviewer${n % 7}` } }),
      );
    }
    const helps = comments.filter(
      (c) => (c.payload as { comment: { body: string } }).comment.body === "/help",
    );
    // Five pushes, in order, each delivered four times under its delivery id, arriving together
    // in the first two waves (as a merge train does); comments fill every wave.
    const pushes = commits.map((_, i) => push(i));
    let c = 0;
    for (let wave = 0; wave < 2; wave++) {
      for (const p of pushes) deliveries.push(p, p);
      for (let k = 0; k < 10; k++) deliveries.push(comments[c++]!);
    }
    while (c < comments.length) deliveries.push(comments[c++]!);
    // Comments redelivered (GitHub's "Redeliver" keeps the delivery id), the /help ones among them.
    for (let k = 0; k < 30; k++) deliveries.push(k < helps.length ? helps[k]! : comments[k * 3]!);
    // The third commit's push once more under a new delivery id, arriving after the newest.
    deliveries.push(push(2));
    assert.equal(deliveries.length, 200);
    const distinct = new Set(deliveries.map((d) => d.id)).size;

    const heapBefore = process.memoryUsage().heapUsed;
    const started = Date.now();
    // Waves of 20 at once, back to back: GitHub sends concurrently.
    const outcomes: PromiseSettledResult<void>[] = [];
    for (let i = 0; i < deliveries.length; i += 20) {
      outcomes.push(
        ...(await Promise.allSettled(deliveries.slice(i, i + 20).map((d) => app.probot.receive(d)))),
      );
    }
    const deliveredMs = Date.now() - started;
    await app.settle();
    const heapAfter = process.memoryUsage().heapUsed;
    t.diagnostic(
      `200 deliveries in ${deliveredMs} ms, settled after ${Date.now() - started} ms; heap ${(heapBefore / 1e6).toFixed(1)} MB -> ${(heapAfter / 1e6).toFixed(1)} MB`,
    );

    assert.deepEqual(
      outcomes.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason)),
      [],
      "every delivery was handled",
    );
    for (const env of ["dev", "stage"] as const) {
      const live = (await cluster.client.get("v1", "ConfigMap", ns[env], "settings")) as unknown as {
        data: { v: string };
      };
      assert.equal(live.data.v, "5", `${env} ends on the newest commit`);
      const rt = app.parts.runtimes.all()[0]!;
      const history = (await rt.reconciler.store.load(rt.reconciler.controller(env).instance)).history;
      assert.ok(
        history.length >= 1 && history.length <= 2,
        `${env}: ${history.length} syncs (${history.map((h) => `${h.revision.slice(0, 7)} ${h.trigger}`).join(", ")})`,
      );
      assert.equal(history.at(-1)?.revision, commits[4]);
      const deployments = github.deployments.filter((d) => d.environment === env);
      assert.ok(deployments.length <= 2, `${env}: ${deployments.length} deployments`);
      assert.equal(github.statesOf(env).at(-1), "success");
    }
    // Each /help was answered once, redeliveries notwithstanding.
    assert.equal(github.comments.length, helps.length);
    // What the burst left behind is bounded: the delivery ids (capped), no reports waiting.
    assert.equal(app.parts.deliveries.size, distinct);
    assert.equal(app.parts.runtimes.all()[0]!.reporter.backlog, 0);
  });

  it("the delivery-id memory is capped: the oldest ids are forgotten first", () => {
    const seen = new RecentDeliveries(2000);
    for (let i = 0; i < 5000; i++) assert.equal(seen.first(`id-${i}`), true);
    assert.equal(seen.size, 2000);
    assert.equal(seen.first("id-4999"), false, "a recent one is still a duplicate");
    assert.equal(seen.first("id-0"), true, "the oldest was forgotten");
  });
});
