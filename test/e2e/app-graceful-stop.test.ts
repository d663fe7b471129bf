// The GitHub App as `npm start` runs it (compiled, its own process, GitHub answered by nock inside
// it), stopped with SIGTERM in the middle of a two-wave sync: readiness fails, the process exits 0
// with every Lease it held released, history says where the sync stopped (not stuck), and another
// replica takes the app over and finishes the sync.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { githubAppId, instanceName } from "../../src/state/identity.ts";
import { StateStore } from "../../src/state/store.ts";
import { ensureBuilt } from "../support/built.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { frontReady, TWO_WAVES } from "../support/two-waves.ts";
import { DEFAULT_OWNER, DEFAULT_REPO, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("npm start stopped by SIGTERM during a sync", () => {
  let dir: string;
  let key: string;
  let repo: ReturnType<typeof makeRepo>;
  let configFile: string;
  let ns: string;
  let stateNs: string;

  before(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "syncward-stop-"));
    key = join(dir, "app.pem");
    execFileSync("openssl", ["genrsa", "-out", key, "2048"], { stdio: "ignore" });
    ns = await cluster.namespace("stop");
    stateNs = await cluster.stateNamespace("stop-state");
    repo = makeRepo({ "app/all.yaml": TWO_WAVES });
    configFile = join(dir, "syncward.yml");
    writeFileSync(
      configFile,
      `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}, healthTimeout: 10m}
`,
    );
  });

  const start = async (identity: string) => {
    const port = await freePort();
    let output = "";
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--import", "./test/support/fake-github-process.ts", "dist/github/server.js"],
      {
        env: {
          ...process.env,
          APP_ID: "1",
          PRIVATE_KEY_PATH: key,
          WEBHOOK_SECRET: "stop-test-secret",
          SYNCWARD_KUBECONFIG: cluster.syncwardKubeconfig,
          SYNCWARD_STATE_NAMESPACE: stateNs,
          SYNCWARD_TREE_CACHE: join(dir, `trees-${identity}`),
          POD_NAME: identity,
          PORT: String(port),
          HOST: "127.0.0.1",
          LOG_LEVEL: "info",
          FAKE_GITHUB_REPO: repo.dir,
          FAKE_GITHUB_CONFIG: configFile,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(child);
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    return { child, base: `http://127.0.0.1:${port}`, output: () => output };
  };

  // The app is named by GitHub's id of the repository (state/identity.ts), not by acme/shop.
  const devInstance = instanceName(githubAppId(repoIdOf(`${DEFAULT_OWNER}/${DEFAULT_REPO}`)), "dev");

  const leasesHeldBy = async (identity: string) =>
    (await cluster.client.list("coordination.k8s.io/v1", "Lease", { namespace: stateNs })).items
      .filter((l) => (l as { spec?: { holderIdentity?: string } }).spec?.holderIdentity === identity)
      .map((l) => l.metadata.name);

  it("fails readiness, stops at a safe point recorded in history, releases its Leases, exits 0; another replica finishes", async () => {
    const a = await start("replica-a");
    await eventually(
      "replica-a to write wave 0 and wait for it",
      async () => Boolean(await cluster.client.get("v1", "Service", ns, "front")),
      90_000,
    );
    assert.ok((await leasesHeldBy("replica-a")).length > 0, `replica-a holds its Leases\n${a.output()}`);
    assert.equal((await fetch(`${a.base}/readyz`)).status, 200, a.output());

    const exited = once(a.child, "exit");
    a.child.kill("SIGTERM");
    // Readiness fails first; the listener closes when the loops have stopped.
    await eventually("replica-a not ready", async () => {
      const status = await fetch(`${a.base}/readyz`).then(
        (r) => r.status,
        () => "refused",
      );
      return status !== 200;
    });
    const [code, signal] = await exited;
    assert.deepEqual([code, signal], [0, null], a.output());
    assert.match(a.output(), /stopped: every Lease released/);
    // Released before the process exited, not left to expire at the end of their term.
    assert.deepEqual(await leasesHeldBy("replica-a"), [], "no Lease still held by replica-a");
    assert.equal(
      await cluster.client.get("v1", "ConfigMap", ns, "after-front"),
      undefined,
      "wave 1 not written",
    );

    const store = new StateStore(cluster.client, stateNs);
    const stopped = await store.load(devInstance);
    const last = stopped.history.at(-1);
    assert.equal(last?.result, "Failed");
    assert.match(last?.message ?? "", /stopped at a safe point .*stopped while waiting for service\/front/);
    assert.equal(stopped.stuck, undefined, "a stopped sync does not hold the revision as stuck");

    // Another replica takes the app over at once and finishes the sync once wave 0 is healthy.
    const b = await start("replica-b");
    await eventually(
      "replica-b to hold the app",
      async () => (await leasesHeldBy("replica-b")).length > 0,
      60_000,
    );
    await frontReady(cluster.client, ns);
    await eventually(
      "replica-b to write wave 1",
      async () => Boolean(await cluster.client.get("v1", "ConfigMap", ns, "after-front")),
      90_000,
    );
    const done = await eventually("a successful sync in history", async () => {
      const s = await store.load(devInstance);
      return s.lastSyncedRevision === repo.head() ? s : undefined;
    });
    assert.equal(done.history.at(-1)?.result, "Succeeded", b.output());
    b.child.kill("SIGTERM");
    assert.deepEqual(await once(b.child, "exit"), [0, null], b.output());
  });
});
