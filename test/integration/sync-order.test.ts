// The order of a sync and per-resource sync options on the real control plane: Namespaces and
// CRDs moved ahead of their first dependant, a dry run of everything before the first write,
// operators' kinds that appear at run time, prunes by wave with finalizers, Prune=false, Replace.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KindRef } from "../../src/engine/live.ts";
import { type SyncRequest, type SyncTarget, syncEnvironment } from "../../src/engine/sync.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { optionalRules } from "../support/syncward-account.ts";

const cluster = useCluster();
const CRD_POLICY = {
  clusterResources: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" }],
};

async function target(fields: Record<string, unknown> = {}): Promise<{ ns: string; target: SyncTarget }> {
  const ns = await cluster.namespace("order");
  return { ns, target: { instance: `shop.${ns}`, env: envConfig(ns, fields) } };
}
const inventories = new WeakMap<SyncTarget, KindRef[]>();
async function sync(
  t: SyncTarget,
  objects: KubeObject[],
  extra: Partial<SyncRequest> = {},
  client?: KubeClient,
) {
  const result = await syncEnvironment(client ?? cluster.syncwardClient, t, {
    revision: "d".repeat(40),
    objects,
    prune: false,
    inventory: inventories.get(t),
    healthTimeoutMs: 60_000,
    ...extra,
  });
  if (result.inventory.length > 0) inventories.set(t, result.inventory);
  return result;
}
const cm = (name: string, annotations: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, annotations },
    data: { v: "1" },
    ...extra,
  }) as KubeObject;
const wave = (n: number) => ({ "argocd.argoproj.io/sync-wave": String(n) });

function crdFor(group: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}`, annotations: wave(1) },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}
const removeCrd = (group: string) =>
  cluster.client.delete({
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
    namespace: "",
    name: `widgets.${group}`,
    apiVersion: "apiextensions.k8s.io/v1",
  });
const widgetRules = (group: string) => [
  ...optionalRules("cluster-resources.yaml"),
  { apiGroups: [group], resources: ["widgets"], verbs: ["get", "list", "watch", "patch", "create"] },
];

describe("sync order", () => {
  it("moves a CRD declared in wave 1 ahead of its custom resource in wave 0", async () => {
    const group = `t${Math.random().toString(36).slice(2, 8)}.example.com`;
    const { ns, target: t } = await target({ policy: CRD_POLICY });
    const widget = {
      apiVersion: `${group}/v1`,
      kind: "Widget",
      metadata: { name: "w1", annotations: wave(0) },
    };
    const { client } = cluster.syncwardClientWith(widgetRules(group));
    try {
      const result = await sync(t, [widget as KubeObject, crdFor(group)], {}, client);
      assert.equal(result.phase, "Succeeded", result.message);
      assert.equal(result.resources.find((r) => r.kind === "CustomResourceDefinition")?.wave, 0);
      assert.ok(await cluster.client.get(`${group}/v1`, "Widget", ns, "w1"));
    } finally {
      await removeCrd(group);
    }
  });

  it("moves a Namespace declared in wave 3 ahead of a ConfigMap in it in wave 0", async () => {
    const name = `late-${Math.random().toString(36).slice(2, 8)}`;
    const { target: t } = await target({
      policy: { clusterResources: [{ group: "", kind: "Namespace" }] },
    });
    t.env.policy.namespaces.push(name);
    const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name, annotations: wave(3) } };
    const inside = {
      ...cm("settings", wave(0)),
      metadata: { name: "settings", namespace: name, annotations: wave(0) },
    };
    // Declaring Namespaces needs listing them cluster-wide, beyond deploy/ and its optional files.
    const client = cluster.client;
    try {
      const result = await sync(t, [inside, ns], {}, client);
      assert.equal(result.phase, "Succeeded", result.message);
      assert.ok(await cluster.client.get("v1", "ConfigMap", name, "settings"));
    } finally {
      await cluster.client.delete({ group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" });
    }
  });

  it("creates the destination namespace with managedNamespaceMetadata's labels and annotations", async () => {
    const name = `created-${Math.random().toString(36).slice(2, 8)}`;
    const t: SyncTarget = {
      instance: `shop.${name}`,
      env: envConfig(name, {
        syncPolicy: {
          syncOptions: ["CreateNamespace=true"],
          managedNamespaceMetadata: {
            labels: { team: "payments" },
            annotations: { owner: "pay@example.com" },
          },
        },
      }),
    };
    try {
      // Creating namespaces is beyond deploy/ (deploy/optional/cluster-resources.yaml grants it).
      const { client } = cluster.syncwardClientWith(optionalRules("cluster-resources.yaml"));
      const result = await sync(t, [cm("settings")], {}, client);
      assert.equal(result.phase, "Succeeded", result.message);
      const ns = await cluster.client.get("v1", "Namespace", undefined, name);
      assert.equal(ns?.metadata.labels?.team, "payments");
      assert.equal(ns?.metadata.annotations?.owner, "pay@example.com");
    } finally {
      await cluster.client.delete({ group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" });
    }
  });

  it("dry-runs every wave before writing any: a typo in wave 2 changes nothing in waves 0 and 1, naming file and line", async () => {
    const { ns, target: t } = await target();
    const typo = cm("feature-flags", wave(2), { daat: { beta: "on" } });
    const origins = new Map([[`/ConfigMap:${ns}/feature-flags`, "app/flags.yaml:7"]]);
    const result = await sync(t, [cm("db", wave(0)), cm("cache", wave(1)), typo], { origins });
    assert.equal(result.phase, "Failed");
    assert.match(
      result.message,
      /^dry run failed before any write, nothing changed: configmap\/feature-flags \(app\/flags\.yaml:7\): .*daat/,
    );
    assert.equal(result.writes, 0);
    for (const name of ["db", "cache", "feature-flags"])
      assert.equal(
        await cluster.client.get("v1", "ConfigMap", ns, name),
        undefined,
        `${name} was not written`,
      );
  });

  it("dry-runs an existing destination namespace with CreateNamespace=true: a typo in wave 1 writes nothing in wave 0", async () => {
    const { ns, target: t } = await target({ syncPolicy: { syncOptions: ["CreateNamespace=true"] } });
    const { client } = cluster.syncwardClientWith(optionalRules("cluster-resources.yaml"));
    const typo = cm("feature-flags", wave(1), { daat: { beta: "on" } });
    const result = await sync(t, [cm("db", wave(0)), typo], {}, client);
    assert.equal(result.phase, "Failed");
    assert.match(
      result.message,
      /^dry run failed before any write, nothing changed: configmap\/feature-flags: .*daat/,
    );
    assert.equal(result.writes, 0);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "db"), undefined, "wave 0 was not written");
  });

  it("lets a custom resource wait for a kind an operator installs at run time (SkipDryRunOnMissingResource), and refuses it without", async () => {
    const group = `t${Math.random().toString(36).slice(2, 8)}.example.com`;
    const { ns, target: t } = await target({ policy: CRD_POLICY });
    const widget = (annotations: Record<string, string>) =>
      ({ apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w1", annotations } }) as KubeObject;
    const refused = await sync(t, [cm("operator-config"), widget(wave(1))]);
    assert.equal(refused.phase, "Error");
    assert.match(refused.message, /does not know kind Widget/);

    const { client } = cluster.syncwardClientWith(widgetRules(group));
    try {
      const result = await sync(
        t,
        [
          cm("operator-config"),
          widget({ ...wave(1), "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true" }),
        ],
        {
          // Between planning and wave 1 the operator (here: the test) registers its CRD.
          onPlan: async () => {
            const crd = crdFor(group);
            await cluster.client.create(crd);
            await eventually("the CRD to be established", async () => {
              const live = await cluster.client.get(crd.apiVersion, crd.kind, undefined, crd.metadata.name);
              const conditions = (live?.status as { conditions?: Array<{ type: string; status: string }> })
                ?.conditions;
              return conditions?.some((c) => c.type === "Established" && c.status === "True");
            });
          },
        },
        client,
      );
      assert.equal(result.phase, "Succeeded", result.message);
      assert.ok(await cluster.client.get(`${group}/v1`, "Widget", ns, "w1"));
    } finally {
      await removeCrd(group);
    }
  });
});

describe("pruning", () => {
  it("prunes the highest wave first and waits until it is gone (a finalizer holds it) before the next", async () => {
    const { ns, target: t } = await target();
    await sync(t, [cm("keep"), cm("low", wave(0)), cm("high", wave(2))]);
    await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/high`, {
      body: { metadata: { finalizers: ["example.com/hold"] } },
      contentType: "application/merge-patch+json",
    });
    const pruned: string[] = [];
    const running = sync(t, [cm("keep")], {
      prune: true,
      onProgress: (e) => {
        if (e.type === "pruned") pruned.push(e.key.split("/").pop() ?? "");
      },
    });
    await eventually("high to be deleting", async () => {
      const high = await cluster.client.get("v1", "ConfigMap", ns, "high");
      return high?.metadata.deletionTimestamp !== undefined;
    });
    // Held by its finalizer: the lower wave waits.
    await new Promise((r) => setTimeout(r, 1500));
    const low = await cluster.client.get("v1", "ConfigMap", ns, "low");
    assert.ok(
      low && low.metadata.deletionTimestamp === undefined,
      "wave 0 is not pruned while wave 2 is still there",
    );
    await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/high`, {
      body: { metadata: { finalizers: null } },
      contentType: "application/merge-patch+json",
    });
    const result = await running;
    assert.equal(result.phase, "Succeeded", result.message);
    assert.deepEqual(pruned, ["high", "low"]);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "low"), undefined);
  });

  it("keeps a Prune=false PersistentVolumeClaim that left Git, saying it requires pruning and was kept", async () => {
    const { ns, target: t } = await target();
    const pvc: KubeObject = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "orders-data", annotations: { "argocd.argoproj.io/sync-options": "Prune=false" } },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    };
    const first = await sync(t, [cm("app"), pvc]);
    assert.equal(first.phase, "Succeeded", first.message);
    const second = await sync(t, [cm("app")], { prune: true });
    assert.equal(second.phase, "Succeeded", second.message);
    assert.ok(await cluster.client.get("v1", "PersistentVolumeClaim", ns, "orders-data"), "the data stays");
    assert.ok(
      second.resources.some(
        (r) =>
          r.name === "orders-data" &&
          r.message === "persistentvolumeclaim/orders-data requires pruning, kept (Prune=false)",
      ),
    );
    assert.match(second.message, /1 require pruning, kept by their sync options/);
  });

  it("empties an environment only when the manual sync says --allow-empty", async () => {
    const { ns, target: t } = await target({ syncPolicy: { automated: { prune: true } } });
    await sync(t, [cm("last")]);
    const refused = await sync(t, [], { prune: true });
    assert.equal(refused.phase, "Refused");
    assert.match(refused.message, /or sync with --allow-empty/);
    const emptied = await sync(t, [], { prune: true, allowEmpty: true });
    assert.equal(emptied.phase, "Succeeded", emptied.message);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "last"), undefined);
  });

  it("prunes a Delete=confirm object only in a sync with --confirm-prune", async () => {
    const { ns, target: t } = await target();
    await sync(t, [cm("app"), cm("ledger", { "argocd.argoproj.io/sync-options": "Delete=confirm" })]);
    const waiting = await sync(t, [cm("app")], { prune: true });
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "ledger"));
    assert.ok(
      waiting.resources.some(
        (r) => r.name === "ledger" && /waits for a sync with --confirm-prune/.test(r.message),
      ),
    );
    const confirmed = await sync(t, [cm("app")], { prune: true, confirmPrune: true });
    assert.equal(confirmed.phase, "Succeeded", confirmed.message);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "ledger"), undefined);
  });
});

describe("Replace and Force", () => {
  const job = (image: string, options: string): KubeObject => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "reindex", annotations: { "argocd.argoproj.io/sync-options": options } },
    spec: {
      backoffLimit: 0,
      template: { spec: { restartPolicy: "Never", containers: [{ name: "r", image }] } },
    },
  });

  it("replaces with Replace=true, and deletes and recreates an immutable change only with Force=true, saying so", async () => {
    const { ns, target: t } = await target();
    const first = await sync(t, [job("tools:1", "Replace=true")]);
    assert.equal(first.phase, "Succeeded", first.message);
    const refused = await sync(t, [job("tools:2", "Replace=true")]);
    assert.equal(refused.phase, "Failed", "an immutable template is not recreated without Force");
    assert.match(refused.message, /immutable/);
    const forced = await sync(t, [job("tools:2", "Replace=true,Force=true")]);
    assert.equal(forced.phase, "Succeeded", forced.message);
    assert.ok(
      forced.resources.some(
        (r) => r.message === "job.batch/reindex configured (deleted and recreated: immutable field)",
      ),
    );
    const live = await cluster.client.get("batch/v1", "Job", ns, "reindex");
    assert.match(JSON.stringify(live?.spec), /tools:2/);
  });

  it("sends a Replace=true object with PUT, so fields another manager added are replaced too", async () => {
    const { ns, target: t } = await target();
    await sync(t, [cm("settings", { "argocd.argoproj.io/sync-options": "Replace=true" })]);
    await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/settings`, {
      body: { data: { extra: "from someone else" } },
      contentType: "application/merge-patch+json",
    });
    const result = await sync(t, [
      cm("settings", { "argocd.argoproj.io/sync-options": "Replace=true" }, { data: { v: "2" } }),
    ]);
    assert.equal(result.phase, "Succeeded", result.message);
    assert.ok(result.resources.some((r) => r.message === "configmap/settings configured (replaced)"));
    const live = await cluster.client.get("v1", "ConfigMap", ns, "settings");
    assert.deepEqual(live?.data, { v: "2" });
  });
});
