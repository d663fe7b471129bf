// Objects nobody declared in Git are reported (risky ones flagged) and never deleted.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();

describe("orphan report", () => {
  it("reports an undeclared DaemonSet and a ServiceAccount bound to cluster-admin, and leaves both running", async () => {
    const ns = await cluster.namespace("orph");
    const stateNs = await cluster.stateNamespace("orph-state");
    kubectl(
      ["-n", ns, "apply", "-f", "-"],
      `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: miner}
spec:
  selector: {matchLabels: {app: miner}}
  template:
    metadata: {labels: {app: miner}}
    spec:
      containers: [{name: m, image: busybox, securityContext: {privileged: true}}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: robot, namespace: ${ns}}]
`,
    );
    const repo = makeRepo({
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: declared}\ndata: {a: b}\n",
    });
    const events: ReconcilerEvent[] = [];
    const controller = new EnvironmentController({
      app: "shop",
      env: envConfig(ns, {
        source: { path: "app" },
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      }),
      client: cluster.syncwardClient,
      store: new StateStore(cluster.syncwardClient, stateNs),
      source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-trees-"))),
      emit: (e) => events.push(e),
      log: pino({ level: "silent" }),
      pollIntervalMs: 0,
    });
    controller.start();
    try {
      const report = await eventually("an orphan report", async () =>
        events.find((e) => e.type === "orphans"),
      );
      assert.equal(report.type, "orphans");
      if (report.type !== "orphans") return;
      const byObject = new Map(report.orphans.map((o) => [o.object, o.risk]));
      assert.match(
        byObject.get(`daemonset.apps/miner in ${ns}`) ?? "",
        /DaemonSet runs on every node; privileged container/,
      );
      assert.match(byObject.get(`serviceaccount/robot in ${ns}`) ?? "", /bound to cluster-admin/);
      assert.match(
        byObject.get(`rolebinding.rbac.authorization.k8s.io/robot-admin in ${ns}`) ?? "",
        /binds the cluster-admin role/,
      );
      assert.equal(byObject.has(`configmap/declared in ${ns}`), false, "declared objects are not orphans");
      assert.equal(byObject.has(`configmap/kube-root-ca.crt in ${ns}`), false, "built-ins are not orphans");
      await controller.idle();
      assert.ok(await cluster.client.get("apps/v1", "DaemonSet", ns, "miner"), "reported, never deleted");
      assert.ok(await cluster.client.get("v1", "ServiceAccount", ns, "robot"));
    } finally {
      await controller.stop();
    }
  });

  it("flags a risky object created after the first scan within seconds (watch, no poll), and leaves it running", async () => {
    const ns = await cluster.namespace("orph-watch");
    const stateNs = await cluster.stateNamespace("orph-watch-state");
    const repo = makeRepo({
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: declared}\ndata: {a: b}\n",
    });
    const events: ReconcilerEvent[] = [];
    const store = new StateStore(cluster.syncwardClient, stateNs);
    const controller = new EnvironmentController({
      app: "shop",
      env: envConfig(ns, { source: { path: "app" }, syncPolicy: { automated: { selfHeal: true } } }),
      client: cluster.syncwardClient,
      store,
      source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-trees-"))),
      emit: (e) => events.push(e),
      log: pino({ level: "silent" }),
      // No polling after the first pass: only the watch can notice the new object.
      pollIntervalMs: 0,
    });
    controller.start();
    try {
      await eventually(
        "first sync",
        async () => (await store.load(controller.instance)).syncStatus === "Synced",
      );
      await controller.idle();
      kubectl(
        ["-n", ns, "apply", "-f", "-"],
        `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: late-miner}
spec:
  selector: {matchLabels: {app: late-miner}}
  template:
    metadata: {labels: {app: late-miner}}
    spec:
      containers: [{name: m, image: busybox}]
      volumes: [{name: root, hostPath: {path: /}}]
`,
      );
      const report = await eventually(
        "a report naming the new DaemonSet",
        async () =>
          events.find(
            (e) =>
              e.type === "orphans" &&
              e.orphans.some((o) => o.object === `daemonset.apps/late-miner in ${ns}`),
          ),
        10_000,
      );
      if (report.type !== "orphans") return;
      assert.match(
        report.orphans.find((o) => o.object.startsWith("daemonset.apps/late-miner"))?.risk ?? "",
        /DaemonSet runs on every node; mounts a hostPath volume/,
      );
      await controller.idle();
      assert.ok(
        await cluster.client.get("apps/v1", "DaemonSet", ns, "late-miner"),
        "reported, never deleted",
      );
    } finally {
      await controller.stop();
    }
  });
});
