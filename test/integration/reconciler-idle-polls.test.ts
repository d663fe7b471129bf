// An idle environment's polls read nothing from the API server while its watches stand for the
// cluster: same commit, same config, no state write, watches connected and quiet. A drift still
// arrives by watch and is reverted; a drift the watch never reported is caught by the hard resync.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { EnvironmentController, type Logger } from "../../src/reconciler/environment-controller.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const configMaps = ["a", "b", "c"]
  .map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf-${n}}\ndata: {level: info}\n`)
  .join("---\n");

/** A logger that counts the idle polls the controller reports. */
function countingLog(): Logger & { idlePolls: () => number } {
  let idle = 0;
  const log: Logger & { idlePolls: () => number } = {
    info() {},
    warn() {},
    error() {},
    debug(_obj, msg) {
      if (msg?.startsWith("idle poll")) idle++;
    },
    idlePolls: () => idle,
  };
  return log;
}

async function setup(client: KubeClient, resyncIntervalMs?: number) {
  const ns = await cluster.namespace("idle");
  const stateNs = await cluster.stateNamespace("idle-state");
  const repo = makeRepo({ "deploy/config.yaml": configMaps });
  const log = countingLog();
  const store = new StateStore(client, stateNs);
  const controller = new EnvironmentController({
    app: "quiet",
    env: envConfig(ns, {
      source: { path: "deploy" },
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    }),
    client,
    store,
    source: new LocalGitSource(repo.dir, cache),
    emit: () => undefined,
    log,
    pollIntervalMs: 300,
    resyncIntervalMs,
  });
  const level = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "conf-a")) as { data?: { level?: string } } | undefined)
      ?.data?.level;
  const drift = () => kubectl(["-n", ns, "patch", "configmap", "conf-a", "-p", '{"data":{"level":"debug"}}']);
  return { controller, store, log, level, drift };
}

/** Resolves once `n` more idle polls have happened. */
async function idlePolls(log: ReturnType<typeof countingLog>, n: number): Promise<void> {
  const from = log.idlePolls();
  await eventually(`${n} idle polls`, async () => log.idlePolls() >= from + n || undefined, 30_000);
}

describe("idle polls", () => {
  it("read nothing from the API server, and a drift still comes by watch and is reverted", async () => {
    // The controller's own client (its state too), so its requests are counted apart from the test's.
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    const { controller, log, level, drift } = await setup(client);
    controller.start();
    try {
      await eventually("first sync", async () => (await level()) === "info");
      await idlePolls(log, 2);
      const before = { ...client.counts, byVerb: { ...client.counts.byVerb } };
      await idlePolls(log, 4);
      assert.deepEqual(client.counts.byVerb, before.byVerb, "four idle polls sent no request");
      assert.equal(client.counts.requests, before.requests);

      drift();
      await eventually("the drift reverted", async () => (await level()) === "info", 15_000);
      // Once the heal has settled, polls are quiet again.
      await idlePolls(log, 2);
    } finally {
      await controller.stop();
      client.close();
    }
  });

  it("catch a drift the watch never reported at the hard resync", async () => {
    const real = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    // The real client, except that while `deaf` its watches drop every event: a lost event.
    let deaf = false;
    const client = Object.create(real) as KubeClient;
    client.watch = ((apiVersion, kind, options, onEvent) =>
      real.watch(apiVersion, kind, options, (type, obj) => {
        if (!deaf) onEvent(type, obj);
      })) as KubeClient["watch"];
    const { controller, store, log, level, drift } = await setup(client, 4_000);
    controller.start();
    try {
      await eventually("first sync", async () => (await level()) === "info");
      await idlePolls(log, 2);
      deaf = true;
      const driftedAt = new Date().toISOString();
      drift();
      // Quiet polls trust the (deaf) watch: the drift stays while they run.
      await idlePolls(log, 2);
      assert.equal(await level(), "debug", "idle polls did not look at the cluster");
      await eventually("the resync reverted the drift", async () => (await level()) === "info", 20_000);
      // The watch is still deaf: only the full pass at the resync could have seen the drift. (Its
      // history entry is written once the revert is applied: waited for, not read at once.)
      const revert = await eventually("the revert in history", async () =>
        (await store.load(controller.instance)).history.find((h) => h.startedAt >= driftedAt && h.drifted),
      );
      assert.deepEqual(
        revert.drifted?.map((d) => d.split(" ")[0]),
        [`/ConfigMap:${(await controller.rules()).destination.namespace}/conf-a`],
      );
    } finally {
      await controller.stop();
      real.close();
    }
  });
});
