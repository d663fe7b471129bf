// Proof that the local control plane is real Kubernetes: controllers, kwok-simulated pods,
// the garbage collector and RBAC all behave as on a production cluster.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";

const cluster = useCluster();

function deployment(namespace: string, name: string, replicas: number): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "web", image: "nginx:1.27" }] },
      },
    },
  };
}

describe("local control plane", () => {
  it("server-side applies a Deployment that becomes Available with kwok-run pods", async () => {
    const ns = await cluster.namespace("smoke");
    const applied = await cluster.client.apply(deployment(ns, "web", 2));
    assert.equal(applied.metadata.managedFields?.[0]?.manager, "syncward");
    const available = await eventually("Deployment web to be Available", async () => {
      const d = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as KubeObject & {
        status?: { availableReplicas?: number; conditions?: Array<{ type: string; status: string }> };
      };
      return d?.status?.conditions?.some((c) => c.type === "Available" && c.status === "True")
        ? d
        : undefined;
    });
    assert.equal(available.status?.availableReplicas, 2);
    const pods = await cluster.client.list("v1", "Pod", { namespace: ns, labelSelector: "app=web" });
    assert.equal(pods.items.length, 2);
    for (const pod of pods.items) {
      assert.equal((pod as { spec?: { nodeName?: string } }).spec?.nodeName, "kwok-node-0");
      assert.equal((pod as { status?: { phase?: string } }).status?.phase, "Running");
    }
  });

  it("deletes the ReplicaSet and Pods of a Deployment deleted in the foreground (garbage collector)", async () => {
    const ns = await cluster.namespace("smoke");
    await cluster.client.apply(deployment(ns, "gc", 1));
    await eventually(
      "a pod of gc",
      async () => (await cluster.client.list("v1", "Pod", { namespace: ns })).items.length === 1,
    );
    assert.equal((await cluster.client.list("apps/v1", "ReplicaSet", { namespace: ns })).items.length, 1);
    await cluster.client.delete(
      { group: "apps", kind: "Deployment", namespace: ns, name: "gc", apiVersion: "apps/v1" },
      "foreground",
    );
    await eventually(
      "the Deployment, its ReplicaSet and its Pods to be gone",
      async () => {
        const [d, rs, pods] = await Promise.all([
          cluster.client.get("apps/v1", "Deployment", ns, "gc"),
          cluster.client.list("apps/v1", "ReplicaSet", { namespace: ns }),
          cluster.client.list("v1", "Pod", { namespace: ns }),
        ]);
        return d === undefined && rs.items.length === 0 && pods.items.length === 0;
      },
      60_000,
    );
  });

  it("forbids a ServiceAccount with a namespaced Role outside its namespace (RBAC)", async () => {
    const ns = await cluster.namespace("rbac");
    const other = await cluster.namespace("rbac-other");
    kubectl(["-n", ns, "create", "serviceaccount", "reader"]);
    kubectl(["-n", ns, "create", "configmap", "visible", "--from-literal=k=v"]);
    kubectl(["-n", ns, "create", "role", "cm-reader", "--verb=get,list", "--resource=configmaps"]);
    kubectl([
      "-n",
      ns,
      "create",
      "rolebinding",
      "cm-reader",
      "--role=cm-reader",
      `--serviceaccount=${ns}:reader`,
    ]);
    const token = kubectl(["-n", ns, "create", "token", "reader"]).trim();
    const dir = mkdtempSync(join(tmpdir(), "syncward-rbac-"));
    const kubeconfig = join(dir, "kubeconfig");
    const admin = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig });
    const caFile = admin.kubeconfig.cluster.caFile ?? "";
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${admin.server.origin}", certificate-authority: "${caFile}"}}]
users: [{name: u, user: {token: "${token}"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`,
    );
    admin.close();
    const reader = KubeClient.fromKubeconfig({ kubeconfig });
    try {
      const own = await reader.list("v1", "ConfigMap", { namespace: ns });
      assert.ok(
        own.items.some((cm) => cm.metadata.name === "visible"),
        "reads ConfigMaps in its own namespace",
      );
      await assert.rejects(reader.list("v1", "ConfigMap", { namespace: other }), (err: unknown) => {
        assert.ok(err instanceof KubeApiError);
        assert.equal(err.status, 403);
        assert.match(err.message, /forbidden/);
        return true;
      });
      await assert.rejects(
        reader.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: ns } }),
        (err: unknown) => {
          assert.ok(err instanceof KubeApiError);
          assert.equal(err.status, 403);
          return true;
        },
      );
    } finally {
      reader.close();
    }
  });
});
