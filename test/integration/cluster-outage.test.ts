// A destination cluster that is down, frozen or half-open, on real planes: dev deploys to the
// shared plane (where the state lives too), prod to a private plane of this file's own, reached
// through a TCP proxy the test can black-hole. Its API server is frozen (SIGSTOP, then SIGCONT),
// killed, and its traffic black-holed in turn: prod reads Unknown with "cluster prod unreachable
// since T" within the bound, dev keeps healing meanwhile, and once prod answers again a drift
// made there is reverted and prod reads Synced again. Nothing is pruned or reported Synced from
// a cluster syncward could not read.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { parse, stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { Clusters } from "../../src/kube/clusters.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { readState } from "../../tools/cluster/plane.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { cuttableProxy } from "../support/cuttable-proxy.ts";
import { makeRepo } from "../support/git-repo.ts";
import { usePrivatePlane } from "../support/private-plane.ts";

const first = useCluster();
const plane = usePrivatePlane();
const scratch = mkdtempSync(join(tmpdir(), "syncward-outage-"));

/** The bound this test holds syncward to: PINGs every 2 s here, answered within 2 s, then a 3 s probe. */
const DETECT_MS = 20_000;

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {value: "${value}"}\n`;

const valueOn = async (client: KubeClient, ns: string, name: string) =>
  ((await client.get("v1", "ConfigMap", ns, name)) as { data?: { value?: string } } | undefined)?.data?.value;

/** What someone with kubectl does: `settings` changed under a manager of their own. */
const tamper = (client: KubeClient, ns: string) =>
  client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/settings?fieldManager=intruder`, {
    body: { data: { value: "tampered" } },
    contentType: "application/merge-patch+json",
  });

const apiserverPid = () => {
  const pid = readState(plane.dir)?.pids["kube-apiserver"];
  assert.ok(pid && pid > 0, "the private plane's kube-apiserver runs");
  return pid;
};

describe("a destination cluster that stops answering", () => {
  let t: {
    ns: { dev: string; prod: string };
    reconciler: Reconciler;
    clusters: Clusters;
    proxy: Awaited<ReturnType<typeof cuttableProxy>>;
    state(env: string): Promise<EnvironmentState>;
  };

  before(async () => {
    const ns = { dev: await first.namespace("outage-dev"), prod: await plane.namespace("outage-prod") };
    const stateNs = await first.stateNamespace("outage-state");
    const proxy = await cuttableProxy(plane.syncwardKubeconfig, plane.server, scratch);
    // prod is a kubeconfig context of syncward's, through the proxy.
    const kc = parse(readFileSync(proxy.kubeconfig, "utf8"));
    kc.contexts[0].name = "prod";
    kc["current-context"] = "prod";
    const file = join(scratch, "prod-kubeconfig");
    writeFileSync(file, stringify(kc));
    const clusters = new Clusters({
      own: first.syncwardClient,
      kubeconfig: Clusters.kubeconfigOf(file),
      clientOptions: { timeoutMs: 3_000, http2Liveness: { readIdleMs: 2_000, pingTimeoutMs: 2_000 } },
    });
    const repo = makeRepo({
      "dev/a.yaml": configMap("settings", "dev-1"),
      "prod/a.yaml": configMap("settings", "prod-1"),
    });
    const reconciler = new Reconciler({
      app: "outage",
      config: parseConfig(`environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: ${ns.dev}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
  - name: prod
    source: {path: prod}
    destination: {namespace: ${ns.prod}, context: prod}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
`),
      client: first.syncwardClient,
      clusters,
      source: new LocalGitSource(repo.dir, join(scratch, "trees")),
      emit: () => undefined,
      log: pino({ level: process.env.SYNCWARD_TEST_LOG ?? "silent" }),
      stateNamespace: stateNs,
      identity: "outage-test",
      leases: false,
      watch: true,
      pollIntervalMs: 0,
    });
    t = {
      ns,
      reconciler,
      clusters,
      proxy,
      state: (env) => reconciler.store.load(reconciler.controller(env).instance),
    };
    reconciler.start();
    await eventually("dev synced", async () => (await valueOn(first.client, ns.dev, "settings")) === "dev-1");
    await eventually(
      "prod synced",
      async () => (await valueOn(plane.client, ns.prod, "settings")) === "prod-1",
    );
    await eventually("prod Synced", async () => (await t.state("prod")).syncStatus === "Synced");
  });

  after(async () => {
    await t?.reconciler.stop();
    t?.clusters.close();
    await t?.proxy.close();
  });

  /** prod reads Unknown with the outage; returns how long that took and the state. */
  async function prodGoesUnknown(since: number) {
    const state = await eventually(
      "prod Unknown with the outage",
      async () => {
        const s = await t.state("prod");
        return s.syncStatus === "Unknown" &&
          /cluster prod unreachable since \S+Z/.test(s.lastError?.message ?? "")
          ? s
          : undefined;
      },
      DETECT_MS + 10_000,
    );
    const took = Date.now() - since;
    assert.ok(took < DETECT_MS, `Unknown after ${took} ms (bound ${DETECT_MS} ms)`);
    assert.equal(state.health, "Unknown");
    const entry = state.history.at(-1);
    assert.equal(entry?.result, "Error");
    assert.match(entry?.message ?? "", /unreachable since .*nothing was applied/);
    return state;
  }

  /** dev, on the cluster that answers, heals as before. */
  async function devStillHeals() {
    await tamper(first.client, t.ns.dev);
    await eventually(
      "dev healed",
      async () => (await valueOn(first.client, t.ns.dev, "settings")) === "dev-1",
      10_000,
    );
  }

  /** Once prod answers: a drift made there is reverted and prod reads Synced and Healthy again. */
  async function prodRecovers() {
    await eventually(
      "the tamper on prod",
      async () => {
        await tamper(plane.client, t.ns.prod);
        return true;
      },
      30_000,
    );
    await eventually(
      "prod healed",
      async () => (await valueOn(plane.client, t.ns.prod, "settings")) === "prod-1",
      30_000,
    );
    await eventually(
      "prod Synced again",
      async () => {
        const s = await t.state("prod");
        return s.syncStatus === "Synced" && s.health !== "Unknown";
      },
      30_000,
    );
  }

  it("frozen (SIGSTOP): prod goes Unknown within the bound, dev keeps healing, SIGCONT brings prod back", async () => {
    const pid = apiserverPid();
    const since = Date.now();
    process.kill(pid, "SIGSTOP");
    try {
      await prodGoesUnknown(since);
      await devStillHeals();
      assert.equal((await t.state("prod")).syncStatus, "Unknown", "prod stays Unknown while frozen");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await prodRecovers();
  });

  it("killed: prod goes Unknown, and after a restart it is read afresh and healed", async () => {
    const since = Date.now();
    await plane.stop("kube-apiserver");
    try {
      await prodGoesUnknown(since);
      await devStillHeals();
    } finally {
      await plane.start("kube-apiserver");
    }
    await prodRecovers();
  });

  it("half-open (traffic black-holed): found by the watch's PING, reported, and recovered", async () => {
    const since = Date.now();
    t.proxy.blackhole();
    try {
      await prodGoesUnknown(since);
      await devStillHeals();
    } finally {
      await t.proxy.restore();
    }
    await prodRecovers();
    // Nothing was pruned on prod while it could not be read.
    assert.equal(await valueOn(plane.client, t.ns.prod, "settings"), "prod-1");
  });
});
