// The seed scenario: a Deployment at 3 replicas, scaled out of band, is healed within seconds
// when selfHeal is on, and only reported when it is off or the environment is frozen.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { KubeClient } from "../../src/kube/client.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const deploymentYaml = (replicas: number, image = "nginx:1.27") => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: ${image}
`;

async function setup(
  fields: Record<string, unknown>,
  more: { files?: Record<string, string>; client?: KubeClient } = {},
) {
  const ns = await cluster.namespace("rec");
  const stateNs = await cluster.stateNamespace("rec-state");
  const repo = makeRepo({ "deploy/web.yaml": deploymentYaml(3), ...more.files });
  const events: ReconcilerEvent[] = [];
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const controller = new EnvironmentController({
    app: "payments",
    env: envConfig(ns, { source: { path: "deploy" }, ...fields }),
    client: more.client ?? cluster.syncwardClient,
    store,
    source: new LocalGitSource(repo.dir, cache),
    emit: (e) => events.push(e),
    log: pino({ level: "silent" }),
    pollIntervalMs: 0,
  });
  return { ns, repo, events, store, controller };
}

const replicasOf = async (ns: string) =>
  (
    (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as
      | { spec: { replicas: number } }
      | undefined
  )?.spec.replicas;

describe("reconciler self-heal", () => {
  it("syncs a new revision once, then reverts an out-of-band scale within seconds and records it", async () => {
    const { ns, repo, events, store, controller } = await setup({
      syncPolicy: { automated: { prune: true, selfHeal: true } },
    });
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      kubectl(["-n", ns, "scale", "deployment/web", "--replicas=10"]);
      await eventually("replicas back to 3", async () => (await replicasOf(ns)) === 3, 10_000);
      const state = await eventually("a self-heal in history", async () => {
        const s = await store.load(controller.instance);
        return s.history.length >= 2 ? s : undefined;
      });
      const [sync, heal] = state.history;
      assert.equal(sync?.trigger, "poll");
      assert.equal(sync?.result, "Succeeded");
      assert.equal(heal?.trigger, "selfHeal");
      assert.equal(heal?.revision, repo.head(), "same revision");
      assert.equal(heal?.revision, sync?.revision);
      assert.deepEqual(heal?.drifted, [`apps/Deployment:${ns}/web /spec/replicas`]);
      // The event follows the history write: wait for it rather than race it.
      await eventually("a selfHealed event", async () => events.some((e) => e.type === "selfHealed"));
    } finally {
      await controller.stop();
    }
  });

  it("reverts an edit to one object by reading and re-applying only that object, not the environment", async () => {
    const configMaps = ["a", "b", "c", "d", "e"]
      .map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf-${n}}\ndata: {level: info}\n`)
      .join("---\n");
    // The controller's own client, so its requests are counted apart from the test's and the store's.
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    const { ns, store, controller } = await setup(
      { syncPolicy: { automated: { prune: true, selfHeal: true } } },
      { files: { "deploy/config.yaml": configMaps }, client },
    );
    const level = async (name: string) =>
      ((await cluster.client.get("v1", "ConfigMap", ns, name)) as { data?: { level?: string } } | undefined)
        ?.data?.level;
    controller.start();
    try {
      await eventually("first sync", async () => (await level("conf-e")) === "info");
      await controller.idle();
      const writes = client.counts.writes;
      const lists: string[] = [];
      const list = client.list.bind(client);
      client.list = (apiVersion, kind, options) => {
        lists.push(kind);
        return list(apiVersion, kind, options);
      };
      kubectl(["-n", ns, "patch", "configmap", "conf-c", "--type=merge", "-p", '{"data":{"level":"debug"}}']);
      await eventually("conf-c reverted", async () => (await level("conf-c")) === "info", 10_000);
      const heal = await eventually("a self-heal in history", async () =>
        (await store.load(controller.instance)).history.find((h) => h.trigger === "selfHeal"),
      );
      await controller.idle();
      assert.deepEqual(heal.drifted, [`/ConfigMap:${ns}/conf-c /data/level`]);
      assert.equal(client.counts.writes - writes, 1, "one write: conf-c re-applied, nothing else");
      assert.deepEqual(lists, [], "nothing listed: the heal read the one object the watch named");
      for (const n of ["a", "b", "d", "e"]) assert.equal(await level(`conf-${n}`), "info");
    } finally {
      await controller.stop();
      client.close();
    }
  });

  it("with selfHeal off, leaves the drift running and reports OutOfSync with the drifted field", async () => {
    const { ns, events, store, controller } = await setup({
      syncPolicy: { automated: { prune: true, selfHeal: false } },
    });
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      kubectl(["-n", ns, "scale", "deployment/web", "--replicas=10"]);
      const report = await eventually(
        "an OutOfSync report",
        async () => events.find((e) => e.type === "outOfSync"),
        10_000,
      );
      assert.equal(report.type, "outOfSync");
      if (report.type === "outOfSync")
        assert.deepEqual(report.drifted, [`apps/Deployment:${ns}/web /spec/replicas`]);
      await controller.idle();
      assert.equal(await replicasOf(ns), 10);
      const state = await store.load(controller.instance);
      assert.equal(state.syncStatus, "OutOfSync");
      assert.equal(state.history.length, 1, "no heal recorded");
    } finally {
      await controller.stop();
    }
  });

  it("does not heal a frozen environment, and heals again once unfrozen", async () => {
    const { ns, store, controller } = await setup({ syncPolicy: { automated: { selfHeal: true } } });
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      await controller.setFreeze({ by: "alice", reason: "incident 42" });
      kubectl(["-n", ns, "scale", "deployment/web", "--replicas=7"]);
      await new Promise((r) => setTimeout(r, 1500));
      await controller.idle();
      assert.equal(await replicasOf(ns), 7, "frozen: drift stays");
      assert.equal((await store.load(controller.instance)).freeze?.reason, "incident 42");
      await controller.setFreeze(undefined);
      await eventually("healed after unfreeze", async () => (await replicasOf(ns)) === 3, 10_000);
    } finally {
      await controller.stop();
    }
  });

  it("does not fight a controller that owns /spec/replicas when it is ignored (ignoreDifferences + RespectIgnoreDifferences)", async () => {
    const { ns, repo, store, controller } = await setup({
      syncPolicy: { automated: { selfHeal: true }, syncOptions: ["RespectIgnoreDifferences=true"] },
      ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
    });
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      kubectl(["-n", ns, "scale", "deployment/web", "--replicas=6"]);
      await new Promise((r) => setTimeout(r, 1500));
      await controller.idle();
      assert.equal(await replicasOf(ns), 6);
      // A new commit changes the image; the sync keeps the other controller's replica count.
      repo.commit({ "deploy/web.yaml": deploymentYaml(3, "nginx:1.28") });
      controller.nudge("push", "alice");
      await eventually(
        "new revision synced",
        async () => (await store.load(controller.instance)).lastSyncedRevision === repo.head(),
        10_000,
      );
      assert.equal(await replicasOf(ns), 6);
      const history = (await store.load(controller.instance)).history;
      assert.equal(history.filter((h) => h.trigger === "selfHeal").length, 0);
      assert.equal(history.at(-1)?.trigger, "push");
      assert.equal(history.at(-1)?.actor, "alice");
    } finally {
      await controller.stop();
    }
  });

  it("raises a drift-fight alert naming a trusted field manager after 3 heals at one revision, and backs off", async () => {
    const { ns, events, controller } = await setup({
      trustedManagers: ["my-autoscaler"],
      syncPolicy: { automated: { selfHeal: true } },
    });
    // A trusted controller that keeps changing a field Git declares: a fight, not an intrusion.
    const autoscale = (replicas: number) =>
      kubectl([
        "-n",
        ns,
        "patch",
        "deployment/web",
        "--subresource=scale",
        "--field-manager=my-autoscaler",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { replicas } }),
      ]);
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      for (let i = 0; i < 3; i++) {
        autoscale(8 + i);
        await eventually(
          `heal ${i + 1}`,
          async () => events.filter((e) => e.type === "selfHealed").length === i + 1,
          10_000,
        );
        await eventually("replicas back to 3", async () => (await replicasOf(ns)) === 3, 10_000);
      }
      const alert = await eventually("a drift-fight alert", async () =>
        events.find((e) => e.type === "driftFight"),
      );
      assert.equal(alert.type, "driftFight");
      if (alert.type !== "driftFight") return;
      assert.equal(alert.fight.object, `deployment.apps/web in ${ns}`);
      assert.deepEqual(alert.fight.fields, ["/spec/replicas"]);
      assert.deepEqual(alert.fight.managers, ["my-autoscaler"]);
      assert.match(
        alert.fight.ignoreSnippet,
        /ignoreDifferences:[\s\S]*jsonPointers:[\s\S]*\/spec\/replicas/,
      );
      assert.ok(alert.fight.backoffMs >= 2000);
      // Backing off: the fourth change is not reverted at once.
      autoscale(12);
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(await replicasOf(ns), 12, "backed off");
      await eventually("healed after the backoff", async () => (await replicasOf(ns)) === 3, 15_000);
    } finally {
      await controller.stop();
    }
  });

  it("never backs off from an untrusted manager: a person's fourth scale is reverted at once too", async () => {
    const { ns, events, store, controller } = await setup({ syncPolicy: { automated: { selfHeal: true } } });
    controller.start();
    try {
      await eventually("first sync", async () => (await replicasOf(ns)) === 3);
      await controller.idle();
      for (let i = 0; i < 4; i++) {
        kubectl(["-n", ns, "scale", "deployment/web", `--replicas=${8 + i}`]);
        await eventually(
          `heal ${i + 1}`,
          async () => events.filter((e) => e.type === "selfHealed").length === i + 1,
          10_000,
        );
        await eventually("replicas back to 3", async () => (await replicasOf(ns)) === 3, 10_000);
      }
      assert.equal(events.filter((e) => e.type === "driftFight").length, 0);
      assert.deepEqual((await store.load(controller.instance)).selfHeals, {}, "not counted as a fight");
    } finally {
      await controller.stop();
    }
  });
});
