// The sync engine against the real control plane: apply, no-op, change, prune, guards, tracking.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KindRef } from "../../src/engine/live.ts";
import { type SyncRequest, type SyncTarget, syncEnvironment } from "../../src/engine/sync.ts";
import { TRACKING_ANNOTATION } from "../../src/engine/tracking.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { optionalRules } from "../support/syncward-account.ts";

const cluster = useCluster();

function deployment(name: string, image = "nginx:1.27", replicas = 2): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image }] } },
    },
  };
}
const service = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] },
});
const configMap = (name: string, data: Record<string, string> = { mode: "fast" }): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data,
});

async function target(fields: Record<string, unknown> = {}): Promise<{ ns: string; target: SyncTarget }> {
  const ns = await cluster.namespace("eng");
  return { ns, target: { instance: `payments.${ns}`, env: envConfig(ns, fields) } };
}

// The inventory of applied kinds is carried from sync to sync, as the reconciler's state does.
// The engine runs as syncward's ServiceAccount (deploy/'s RBAC) unless a test says otherwise.
const inventories = new WeakMap<SyncTarget, KindRef[]>();
async function sync(
  t: SyncTarget,
  objects: KubeObject[],
  extra: Partial<SyncRequest> = {},
  client = cluster.syncwardClient,
) {
  const result = await syncEnvironment(client, t, {
    revision: "a".repeat(40),
    objects,
    prune: false,
    inventory: inventories.get(t),
    ...extra,
  });
  if (result.inventory.length > 0) inventories.set(t, result.inventory);
  return result;
}

const messages = (r: { resources: Array<{ message: string }> }) => r.resources.map((x) => x.message).sort();

describe("sync engine", () => {
  it("creates objects with tracking, then makes zero writes when nothing changed, then configures only what changed", async () => {
    const { ns, target: t } = await target();
    const first = await sync(t, [deployment("web"), service("web"), configMap("settings")]);
    assert.equal(first.phase, "Succeeded", first.message);
    assert.deepEqual(messages(first), [
      "configmap/settings created",
      "deployment.apps/web created",
      "service/web created",
    ]);
    assert.equal(first.totals.created, 3);
    const live = await cluster.client.get("apps/v1", "Deployment", ns, "web");
    assert.equal(
      live?.metadata.annotations?.[TRACKING_ANNOTATION],
      `payments.${ns}:apps/Deployment:${ns}/web`,
    );

    const again = await sync(t, [deployment("web"), service("web"), configMap("settings")]);
    assert.equal(again.phase, "Succeeded");
    assert.equal(again.writes, 0, "a sync with nothing changed writes nothing");
    assert.equal(again.totals.unchanged, 3);
    assert.deepEqual(messages(again), [
      "configmap/settings unchanged",
      "deployment.apps/web unchanged",
      "service/web unchanged",
    ]);

    const changed = await sync(t, [deployment("web", "nginx:1.28"), service("web"), configMap("settings")]);
    assert.equal(changed.totals.configured, 1);
    assert.equal(changed.writes, 1);
    const web = changed.resources.find((r) => r.name === "web" && r.kind === "Deployment");
    assert.equal(web?.message, "deployment.apps/web configured");
    const after = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as KubeObject & {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    assert.equal(after.spec.template.spec.containers[0]?.image, "nginx:1.28");
  });

  it("reports objects Git no longer declares as requiring pruning when prune is off, and prunes them when on", async () => {
    const { ns, target: t } = await target();
    await sync(t, [deployment("web"), configMap("old"), configMap("keep")]);
    const noPrune = await sync(t, [deployment("web"), configMap("keep")]);
    assert.equal(noPrune.phase, "Succeeded");
    const old = noPrune.resources.find((r) => r.name === "old");
    assert.equal(old?.status, "OutOfSync");
    assert.match(old?.message ?? "", /requires pruning/);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "old"), "still there with prune off");

    const pruned = await sync(t, [deployment("web"), configMap("keep")], { prune: true });
    assert.equal(pruned.phase, "Succeeded", pruned.message);
    assert.ok(messages(pruned).includes("configmap/old pruned"));
    assert.equal(pruned.totals.pruned, 1);
    await eventually(
      "old to be gone (foreground deletion)",
      async () => (await cluster.client.get("v1", "ConfigMap", ns, "old")) === undefined,
    );
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "keep"));
  });

  it("never prunes objects it does not manage, even ones carrying a copied tracking annotation", async () => {
    const { ns, target: t } = await target();
    await sync(t, [configMap("mine")]);
    const mine = await cluster.client.get("v1", "ConfigMap", ns, "mine");
    // A person copies a managed manifest (annotation and label included) under a new name.
    await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "copied",
        namespace: ns,
        labels: mine?.metadata.labels,
        annotations: mine?.metadata.annotations,
      },
      data: { x: "1" },
    });
    await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "unmanaged", namespace: ns },
      data: {},
    });
    const result = await sync(t, [configMap("other")], { prune: true });
    assert.equal(result.phase, "Succeeded", result.message);
    assert.deepEqual(messages(result), ["configmap/mine pruned", "configmap/other created"]);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "copied"), "the copy is not ours");
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "unmanaged"));
  });

  it("refuses an empty render instead of deleting the environment (allowEmpty: false, the default)", async () => {
    const { ns, target: t } = await target({ syncPolicy: { automated: { prune: true } } });
    await sync(t, [deployment("web"), service("web"), configMap("a")]);
    const result = await sync(t, [], { prune: true });
    assert.equal(result.phase, "Refused");
    assert.match(result.message, /^render produced 0 objects; refusing to prune 3 live objects/);
    assert.equal(result.writes, 0);
    assert.ok(await cluster.client.get("apps/v1", "Deployment", ns, "web"));
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "a"));
  });

  it("allows an empty render with allowEmpty: true", async () => {
    const { ns, target: t } = await target({ syncPolicy: { automated: { prune: true, allowEmpty: true } } });
    await sync(t, [configMap("a")]);
    const result = await sync(t, [], { prune: true });
    assert.equal(result.phase, "Succeeded", result.message);
    await eventually(
      "a to be gone",
      async () => (await cluster.client.get("v1", "ConfigMap", ns, "a")) === undefined,
    );
  });

  it("refuses a sync that would prune more than pruneLimit unless overridden", async () => {
    const { ns, target: t } = await target({ syncPolicy: { pruneLimit: 1 } });
    await sync(t, [configMap("a"), configMap("b"), configMap("c")]);
    const refused = await sync(t, [configMap("a")], { prune: true });
    assert.equal(refused.phase, "Refused");
    assert.match(refused.message, /would delete 2 objects, more than the limit of 1/);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "b"));
    const forced = await sync(t, [configMap("a")], { prune: true, overridePruneLimit: true });
    assert.equal(forced.phase, "Succeeded", forced.message);
    assert.equal(forced.totals.pruned, 2);
  });

  it("applies nothing when a kind is unknown to the cluster or an object leaves the allowed namespaces", async () => {
    const { ns, target: t } = await target();
    const widget: KubeObject = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } };
    const unknown = await sync(t, [configMap("first"), widget]);
    assert.equal(unknown.phase, "Error");
    assert.match(
      unknown.message,
      /widget\.example\.com\/w: the cluster does not know kind Widget in example\.com\/v1/,
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "first"), undefined, "nothing applied");

    const elsewhere = { ...configMap("x"), metadata: { name: "x", namespace: "kube-system" } };
    const denied = await sync(t, [configMap("first"), elsewhere]);
    assert.equal(denied.phase, "Error");
    assert.match(denied.message, /namespace "kube-system" is not allowed/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "first"), undefined);
    const clusterScoped: KubeObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `r-${ns}` },
      rules: [],
    };
    const noCluster = await sync(t, [clusterScoped]);
    assert.equal(noCluster.phase, "Error");
    assert.match(noCluster.message, /cluster-scoped kind ClusterRole is not allowed/);
  });

  it("applies a CRD, waits until it is established, then applies its custom resources", async () => {
    const suffix = Math.random().toString(36).slice(2, 8);
    const group = `t${suffix}.example.com`;
    const { ns, target: t } = await target({
      policy: { clusterResources: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" }] },
    });
    const crd: KubeObject = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${group}` },
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
    const widget: KubeObject = {
      apiVersion: `${group}/v1`,
      kind: "Widget",
      metadata: { name: "w1" },
      spec: { size: 3 },
    } as KubeObject;
    // Beyond deploy/: CRDs from deploy/optional/, and the new group's custom resources, as
    // rbac-manager.yaml tells users to add them.
    const { client } = cluster.syncwardClientWith([
      ...optionalRules("cluster-resources.yaml"),
      { apiGroups: [group], resources: ["widgets"], verbs: ["get", "list", "watch", "patch", "create"] },
    ]);
    const result = await sync(t, [widget, crd], {}, client);
    assert.equal(result.phase, "Succeeded", result.message);
    assert.ok(await cluster.client.get(`${group}/v1`, "Widget", ns, "w1"));
    await cluster.client.delete({
      group: "apiextensions.k8s.io",
      kind: "CustomResourceDefinition",
      namespace: "",
      name: `widgets.${group}`,
      apiVersion: "apiextensions.k8s.io/v1",
    });
  });

  it("stops at a wave that does not become healthy, applying nothing after it", async () => {
    const { ns, target: t } = await target();
    const pvc: KubeObject = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data", annotations: { "argocd.argoproj.io/sync-wave": "0" } },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "1Gi" } },
        storageClassName: "none",
      },
    };
    const later = {
      ...configMap("later"),
      metadata: { name: "later", annotations: { "argocd.argoproj.io/sync-wave": "1" } },
    };
    const result = await sync(t, [pvc, later], { healthTimeoutMs: 1500 });
    assert.equal(result.phase, "Failed");
    assert.match(result.message, /timed out waiting for persistentvolumeclaim\/data to become healthy/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "later"), undefined);
    assert.match(result.resources.find((r) => r.name === "later")?.message ?? "", /not applied/);
  });

  it("explains an immutable-field error, and recreates the object when forced", async () => {
    const { ns, target: t } = await target();
    await sync(t, [deployment("web")]);
    const moved = deployment("web");
    (moved.spec as { selector: unknown }).selector = { matchLabels: { app: "web", tier: "front" } };
    (
      moved.spec as { template: { metadata: { labels: Record<string, string> } } }
    ).template.metadata.labels.tier = "front";
    const failed = await sync(t, [moved]);
    assert.equal(failed.phase, "Failed");
    assert.match(failed.message, /immutable.*--force/s);
    const forced = await sync(t, [moved], { force: true });
    assert.equal(forced.phase, "Succeeded", forced.message);
    const live = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as KubeObject & {
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    assert.equal(live.spec.selector.matchLabels.tier, "front");
  });

  it("creates the destination namespace with CreateNamespace=true", async () => {
    const name = `eng-new-${Math.random().toString(36).slice(2, 7)}`;
    const t: SyncTarget = {
      instance: `payments.${name}`,
      env: envConfig(name, { syncPolicy: { syncOptions: ["CreateNamespace=true"] } }),
    };
    // Creating namespaces is beyond deploy/: deploy/optional/cluster-resources.yaml grants it.
    const denied = await sync(t, [configMap("a")]);
    assert.equal(denied.phase, "Failed");
    assert.match(denied.message, /forbidden: cannot create namespaces at the cluster scope/);
    const { client } = cluster.syncwardClientWith(optionalRules("cluster-resources.yaml"));
    const result = await sync(t, [configMap("a")], {}, client);
    assert.equal(result.phase, "Succeeded", result.message);
    assert.ok(await cluster.client.get("v1", "ConfigMap", name, "a"));
    await cluster.client.delete(
      { group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" },
      "background",
    );
  });

  it("keeps a field that ignoreDifferences + RespectIgnoreDifferences leave to another controller", async () => {
    const { ns, target: t } = await target({
      syncPolicy: { syncOptions: ["RespectIgnoreDifferences=true"] },
      ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
    });
    await sync(t, [deployment("web", "nginx:1.27", 2)]);
    // An HPA-like actor scales it.
    await cluster.client.request("PATCH", `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`, {
      body: { spec: { replicas: 5 } },
      contentType: "application/merge-patch+json",
    });
    const result = await sync(t, [deployment("web", "nginx:1.28", 2)]);
    assert.equal(result.phase, "Succeeded", result.message);
    const live = await eventually("image updated", async () => {
      const d = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as KubeObject & {
        spec: { replicas: number; template: { spec: { containers: Array<{ image: string }> } } };
      };
      return d.spec.template.spec.containers[0]?.image === "nginx:1.28" ? d : undefined;
    });
    assert.equal(live.spec.replicas, 5, "replicas left to the other controller");
  });

  it("applies PreSync before Sync before PostSync, and runs SyncFail hooks only when the sync fails", async () => {
    const { ns, target: t } = await target();
    const hook = (name: string, phase: string): KubeObject => ({
      ...configMap(name),
      metadata: { name, annotations: { "argocd.argoproj.io/hook": phase } },
    });
    const order: string[] = [];
    const ok = await sync(
      t,
      [hook("post", "PostSync"), configMap("main"), hook("pre", "PreSync"), hook("on-fail", "SyncFail")],
      {
        onProgress: (e) => {
          if (e.type === "applied") order.push(e.key.split("/").pop() ?? "");
          if (e.type === "hook") order.push(e.name);
        },
      },
    );
    assert.equal(ok.phase, "Succeeded", ok.message);
    assert.deepEqual(order, ["pre", "main", "post"]);
    assert.equal(
      await cluster.client.get("v1", "ConfigMap", ns, "on-fail"),
      undefined,
      "SyncFail hooks wait for a failure",
    );

    // A wave that never becomes healthy (no node matches) fails the sync after writes were made;
    // a dry-run failure would change nothing and run no SyncFail hook.
    const stuck: KubeObject = {
      ...deployment("stuck", "nginx:1.27", 1),
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "stuck" } },
        template: {
          metadata: { labels: { app: "stuck" } },
          spec: {
            nodeSelector: { "syncward.dev/no-such-node": "true" },
            containers: [{ name: "w", image: "nginx" }],
          },
        },
      },
    };
    const later = {
      ...configMap("later"),
      metadata: { name: "later", annotations: { "argocd.argoproj.io/sync-wave": "1" } },
    };
    const failed = await sync(t, [configMap("main"), stuck, later, hook("on-fail", "SyncFail")], {
      healthTimeoutMs: 2_000,
    });
    assert.equal(failed.phase, "Failed");
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "on-fail"), "the SyncFail hook ran");
    assert.ok(
      messages(failed).includes("configmap/on-fail SyncFail hook succeeded"),
      messages(failed).join("\n"),
    );
  });

  it("fails an object with an unknown field at once with the API server's message, applying nothing of it", async () => {
    const typo = { ...configMap("typo"), daat: { x: "1" } } as KubeObject;
    const strict = await target();
    const refused = await sync(strict.target, [typo]);
    assert.equal(refused.phase, "Failed");
    assert.match(refused.message, /\.daat: field not declared in schema/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", strict.ns, "typo"), undefined);
    assert.equal(refused.retryable, false, "a permanent error is not worth a retry");
  });

  it("uses a server-side dry run to see that what the server normalizes is not drift, while real drift stays", async () => {
    const { ns, target: t } = await target();
    const svc: KubeObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "api" },
      // Helm charts often render an empty clusterIP; the server fills it in.
      spec: { clusterIP: "", selector: { app: "api" }, ports: [{ port: 80, targetPort: 8080 }] },
    };
    const first = await sync(t, [svc]);
    assert.equal(first.phase, "Succeeded", first.message);
    const again = await sync(t, [svc]);
    assert.equal(again.totals.unchanged, 1, again.message);
    assert.equal(again.writes, 0, "the empty clusterIP the server filled in is not drift");

    await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/services/api`, {
      body: { spec: { selector: { app: "intruder" } } },
      contentType: "application/merge-patch+json",
    });
    const healed = await sync(t, [svc]);
    assert.equal(healed.totals.configured, 1, "a changed selector is real drift");
    assert.deepEqual(healed.resources.find((r) => r.name === "api")?.drifted, ["/spec/selector/app"]);
  });

  it("prunes with the configured propagation: orphan leaves a pruned Deployment's ReplicaSet running", async () => {
    const { ns, target: t } = await target({
      syncPolicy: { syncOptions: ["PrunePropagationPolicy=orphan", "PruneLast=true"] },
    });
    await sync(t, [deployment("old", "nginx:1.27", 1), configMap("keep")]);
    await eventually(
      "the ReplicaSet of old",
      async () => (await cluster.client.list("apps/v1", "ReplicaSet", { namespace: ns })).items.length === 1,
    );
    const result = await sync(t, [configMap("keep"), configMap("new")], { prune: true });
    assert.equal(result.phase, "Succeeded", result.message);
    assert.ok(messages(result).includes("deployment.apps/old pruned"));
    await eventually(
      "old to be gone",
      async () => (await cluster.client.get("apps/v1", "Deployment", ns, "old")) === undefined,
    );
    const replicaSets = await cluster.client.list("apps/v1", "ReplicaSet", { namespace: ns });
    assert.equal(replicaSets.items.length, 1, "orphan propagation keeps the ReplicaSet");
    assert.equal(
      replicaSets.items[0]?.metadata.ownerReferences?.length ?? 0,
      0,
      "and it no longer has an owner",
    );
  });
});
