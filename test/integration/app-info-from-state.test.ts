// syncward_app_info follows the state store, not only this process's events: a status stored
// before start shows at once, a sync run by another process (the CLI) shows on this process's
// metrics endpoint, and an environment that leaves the config loses its series.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { checkoutApp } from "../../src/cli/app-identity.ts";
import { AppStatusFollower } from "../../src/observability/app-status-follower.ts";
import { healthHandler } from "../../src/observability/http.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { instanceName } from "../../src/state/identity.ts";
import { StateStore } from "../../src/state/store.ts";
import { ensureBuilt, ROOT } from "../support/built.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();

describe("syncward_app_info from stored state", () => {
  let server: Server;
  let url: string;
  let follower: AppStatusFollower;
  let stateNs: string;
  const metrics = createMetrics({ defaultMetrics: false });

  before(async () => {
    ensureBuilt();
    stateNs = await cluster.stateNamespace("appinfo-state");
    server = createServer((req, res) => {
      if (!healthHandler({ metrics, ready: () => true })(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });

  after(async () => {
    await follower?.stop();
    server?.close();
  });

  /** The app_info series as a scrape shows them: `environment sync health` per line, sorted. */
  async function scrape(): Promise<string[]> {
    const text = await (await fetch(url)).text();
    return text
      .split("\n")
      .filter((l) => l.startsWith("syncward_app_info{"))
      .map((l) => {
        const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(l)?.[1];
        assert.match(l, / 1$/, "value 1");
        return `${label("app")} ${label("environment")} ${label("sync_status")} ${label("health_status")}`;
      })
      .sort();
  }

  const shows = (expected: string[]) => async () => {
    const now = await scrape();
    return JSON.stringify(now) === JSON.stringify(expected) ? now : undefined;
  };

  it("shows the stored status at start, a CLI sync from another process, and drops removed environments", async () => {
    const ns = await cluster.namespace("appinfo");
    const repo = makeRepo({
      ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n  - name: staging\n    source: {path: app}\n    destination: {namespace: ${ns}}\n`,
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n",
    });
    // The app's identity, as the CLI derives it for `--app shop` (state/identity.ts): it names the
    // state ConfigMaps and is the series' app label, as a runtime tracks it.
    const app = checkoutApp(repo.dir, "shop").id;
    const instance = (env: string) => instanceName(app, env);
    // Written before the follower starts, as another replica would have left it: stuck, so Degraded.
    await new StateStore(cluster.syncwardClient, stateNs).update(instance("staging"), (s) => {
      s.syncStatus = "OutOfSync";
      s.health = "Healthy";
      s.stuck = { revision: "abc", reason: "apply failed", since: new Date().toISOString() };
    });
    follower = new AppStatusFollower({
      client: cluster.syncwardClient,
      namespace: stateNs,
      metrics,
      retryMs: 200,
    });
    follower.track(app, ["dev", "staging"]);
    follower.start();
    await eventually(
      "the stored status on the gauge",
      shows([`${app} dev Unknown Unknown`, `${app} staging OutOfSync Degraded`]),
    );

    // Another process (the CLI) syncs dev and writes its state.
    const flags = {
      "--repo": repo.dir,
      "--kubeconfig": cluster.syncwardKubeconfig,
      "--app": "shop",
      "--state-namespace": stateNs,
    };
    const cli = spawnSync(
      process.execPath,
      ["bin/syncward.js", "app", "sync", "dev", ...Object.entries(flags).flat()],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    assert.equal(cli.status, 0, cli.stderr);
    await eventually(
      "the CLI's sync on this process's gauge",
      shows([`${app} dev Synced Healthy`, `${app} staging OutOfSync Degraded`]),
    );

    // staging leaves the config: its series goes; the app stops here: all of its series go.
    follower.track(app, ["dev"]);
    assert.deepEqual(await scrape(), [`${app} dev Synced Healthy`]);
    follower.untrack(app);
    assert.deepEqual(await scrape(), []);
  });
});
