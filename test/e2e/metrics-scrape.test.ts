// /metrics as Prometheus scrapes it after a push synced an environment through the GitHub App:
// the state gauge carries app, environment, where it deploys, sync and health status; a GitHub request that failed
// (a 502 on the first check run, retried) is counted with its status; the build is named.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Probot } from "probot";
import { type SyncwardApp, syncwardApp } from "../../src/github/app.ts";
import { AppStatusFollower } from "../../src/observability/app-status-follower.ts";
import { healthHandler } from "../../src/observability/http.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { REPO_PATH } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import {
  GITHUB_API,
  type GitHubMock,
  mockGitHub,
  TestOctokit,
  takeOpenApiViolations,
} from "../support/github.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { pushEvent, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
/** The app of acme/shop: its GitHub id (a rename keeps it). */
const APP = `gh_${repoIdOf("acme/shop")}`;

describe("the metrics endpoint after a sync", () => {
  let mock: GitHubMock;
  let parts: SyncwardApp | undefined;
  let server: Server;
  let scrape: () => Promise<string>;
  /** What a replica that ran none of the syncs shows: the gauge from the stored state only. */
  const fromState = createMetrics({ defaultMetrics: false });
  let follower: AppStatusFollower;
  let ns = "";

  before(async () => {
    ns = await cluster.namespace("metrics");
    const stateNs = await cluster.stateNamespace("metrics-state");
    const config = `environments:\n  - name: prod\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true}}\n`;
    const repo = makeRepo({
      ".github/syncward.yml": config,
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: on}\n",
    });
    mock = mockGitHub();
    // GitHub fails the first check run with a 502 (then answers): the reporter retries it.
    mock.scope(GITHUB_API).post(`${REPO_PATH}/check-runs`).reply(502, { message: "Server Error" });
    answerEverything(mock, config, repo.dir, repo.head());
    const metrics = createMetrics({ defaultMetrics: false });
    const log = createLogger({ level: "silent" });
    follower = new AppStatusFollower({
      client: cluster.syncwardClient,
      namespace: stateNs,
      metrics: fromState,
    });
    follower.start();
    const probot = new Probot({ githubToken: "test", Octokit: TestOctokit, log });
    await probot.load(
      syncwardApp(
        {
          client: cluster.syncwardClient,
          stateNamespace: stateNs,
          cacheDir: join(repo.dir, ".trees"),
          identity: "metrics-test",
          leases: false,
          watch: false,
          pollIntervalMs: 0,
          autoStart: false,
          reportRetryMs: { initial: 10, max: 50 },
          log,
          metrics,
          onEvent: (e, placement) => metrics.recordEvent(e, placement),
          appStatus: follower,
        },
        (p) => {
          parts = p;
        },
      ),
    );
    server = createServer((req, res) => {
      if (!healthHandler({ metrics, ready: () => true })(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await probot.receive(
      pushEvent({ after: repo.head(), before: "0".repeat(40), modified: ["app/cm.yaml"] }),
    );
    await eventually(
      "the sync and its check run",
      async () => /syncward_github_requests_total\{method="POST",status="201"\}/.test(await scrape()),
      30_000,
    );
  });

  after(async () => {
    await Promise.all(parts?.runtimes.all().map((r) => r.stop()) ?? []);
    await follower?.stop();
    server?.close();
    mock.reset();
  });

  it("shows the environment's state with app, environment and placement labels", async () => {
    const text = await scrape();
    const where = `project="",cluster="${cluster.syncwardClient.contextName}",destination_namespace="${ns}"`;
    assert.match(
      text,
      new RegExp(
        `^syncward_app_info\\{app="${APP}",environment="prod",${where},sync_status="Synced",health_status="Healthy"\\} 1$`,
        "m",
      ),
    );
    assert.match(
      text,
      new RegExp(
        `^syncward_last_sync_timestamp_seconds\\{app="${APP}",environment="prod"\\} \\d+(\\.\\d+)?$`,
        "m",
      ),
    );
    assert.match(
      text,
      new RegExp(
        `^syncward_syncs_total\\{app="${APP}",environment="prod",trigger="push",result="Succeeded"\\} 1$`,
        "m",
      ),
    );
    assert.match(text, /^syncward_build_info\{version="[^"]+",commit="[^"]+",node="[^"]+"\} 1$/m);
  });

  it("shows the same series from the stored state alone (the runtime tells the follower its environments)", async () => {
    const line = /^syncward_app_info\{.*\} 1$/m;
    const fromEvents = (await scrape()).match(line)?.[0];
    assert.ok(fromEvents);
    await eventually("the stored state on the other registry", async () =>
      (await fromState.registry.metrics()).match(line)?.[0] === fromEvents ? true : undefined,
    );
  });

  it("counts the failed GitHub request with its status", async () => {
    const text = await scrape();
    assert.match(text, /^syncward_github_requests_total\{method="POST",status="502"\} 1$/m);
    assert.deepEqual(takeOpenApiViolations(), []);
  });
});
