// syncward with only deploy/'s RBAC: a kind it may not touch fails on its own with the verb and
// resource to grant, the objects beside it still sync, and nothing of the credential is shown.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parse } from "yaml";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { syncEnvironment } from "../../src/engine/sync.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const token = (
  parse(readFileSync(cluster.syncwardKubeconfig, "utf8")) as { users: Array<{ user: { token: string } }> }
).users[0]?.user.token;

const clusterRole = (name: string): KubeObject =>
  ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
  }) as KubeObject;
const configMap = (name: string, wave?: number): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name,
    ...(wave === undefined ? {} : { annotations: { "argocd.argoproj.io/sync-wave": String(wave) } }),
  },
  data: { mode: "fast" },
});
const allowClusterRoles = {
  policy: { clusterResources: [{ group: "rbac.authorization.k8s.io", kind: "ClusterRole" }] },
};

describe("least privilege", () => {
  it("runs syncward without cluster-admin: deploy/'s ServiceAccount may not create namespaces or read ClusterRoles", async () => {
    await assert.rejects(
      cluster.syncwardClient.list("rbac.authorization.k8s.io/v1", "ClusterRole"),
      (err: unknown) => err instanceof KubeApiError && err.status === 403,
    );
    await assert.rejects(
      cluster.syncwardClient.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "sw-never" } }),
      (err: unknown) => err instanceof KubeApiError && err.status === 403,
    );
  });

  it("fails a ClusterRole it may not touch on its own, naming verb and resource; the ConfigMap in its wave syncs, later waves wait", async () => {
    const ns = await cluster.namespace("lp");
    const name = `lp-${ns}`;
    const result = await syncEnvironment(
      cluster.syncwardClient,
      { instance: `shop.${ns}`, env: envConfig(ns, allowClusterRoles) },
      {
        revision: "a".repeat(40),
        objects: [clusterRole(name), configMap("settings"), configMap("later", 1)],
        prune: true,
      },
    );
    assert.equal(result.phase, "Failed");
    assert.equal(result.retryable, false, "a forbidden object is a permanent failure");
    const byName = new Map(result.resources.map((r) => [r.name, r]));
    assert.equal(byName.get(name)?.status, "Failed");
    assert.match(
      byName.get(name)?.message ?? "",
      new RegExp(
        `^clusterrole\\.rbac\\.authorization\\.k8s\\.io/${name} failed: forbidden: cannot list clusterroles\\.rbac\\.authorization\\.k8s\\.io at the cluster scope \\(as system:serviceaccount:`,
      ),
    );
    assert.equal(byName.get("settings")?.message, "configmap/settings created");
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "settings"), "the ConfigMap beside it is live");
    assert.match(byName.get("later")?.message ?? "", /not applied: an earlier wave failed/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "later"), undefined);
    assert.equal(
      await cluster.client.get("rbac.authorization.k8s.io/v1", "ClusterRole", undefined, name),
      undefined,
    );
    assert.deepEqual(
      result.inventory.map((k) => k.kind),
      ["ConfigMap"],
      "a kind it could not read is not remembered for pruning",
    );
    assert.ok(token && !JSON.stringify(result).includes(token), "the token is never in a result");
  });

  it("fails a kind it may not list on its own when the environment spans two namespaces", async () => {
    const ns = await cluster.namespace("lp");
    const other = await cluster.namespace("lp-other");
    // deploy/'s RBAC has no LimitRanges: listing them in `other` (looking for ones to prune) is denied too.
    const limits = {
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: { name: "limits" },
      spec: { limits: [{ type: "Container", default: { cpu: "100m" } }] },
    } as KubeObject;
    const result = await syncEnvironment(
      cluster.syncwardClient,
      { instance: `shop.${ns}`, env: envConfig(ns, { policy: { namespaces: [ns, other] } }) },
      { revision: "c".repeat(40), objects: [limits, configMap("settings")], prune: true },
    );
    assert.equal(result.phase, "Failed");
    assert.match(
      result.resources.find((r) => r.kind === "LimitRange")?.message ?? "",
      new RegExp(`^limitrange/limits failed: forbidden: cannot list limitranges in namespace "${ns}"`),
    );
    assert.equal(result.resources.find((r) => r.kind === "ConfigMap")?.message, "configmap/settings created");
    assert.deepEqual(
      result.inventory.map((k) => k.kind),
      ["ConfigMap"],
    );
  });

  it("fails an object it may read but not write with the write verb, in the dry run, before anything is written", async () => {
    const ns = await cluster.namespace("lp");
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "debug" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    } as KubeObject;
    const result = await syncEnvironment(
      cluster.syncwardClient,
      { instance: `shop.${ns}`, env: envConfig(ns) },
      { revision: "b".repeat(40), objects: [pod, configMap("settings")], prune: false },
    );
    assert.equal(result.phase, "Failed");
    assert.match(
      result.resources.find((r) => r.kind === "Pod")?.message ?? "",
      new RegExp(`^pod/debug failed a dry run: forbidden: cannot patch pods in namespace "${ns}"`),
    );
    assert.equal(
      result.resources.find((r) => r.kind === "ConfigMap")?.message,
      "configmap/settings not applied: the dry run of this sync failed; nothing was written",
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined);
  });

  it("shows the forbidden object in `syncward app sync` output, with a failing exit code and no token", async () => {
    const ns = await cluster.namespace("lp-cli");
    const stateNs = await cluster.stateNamespace("lp-state");
    const name = `lp-${ns}`;
    const repo = makeRepo({
      // One attempt: a failed sync is retried, and this test is about what one attempt shows.
      ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {retry: {limit: 0}}\n    policy: {clusterResources: [{group: rbac.authorization.k8s.io, kind: ClusterRole}]}\n`,
      "app/role.yaml": `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${name}}\nrules: []\n`,
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n",
    });
    let out = "";
    let err = "";
    const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
    const code = await main(
      [
        "app",
        "sync",
        "dev",
        "--repo",
        repo.dir,
        "--kubeconfig",
        cluster.syncwardKubeconfig,
        "--app",
        "shop",
        "--state-namespace",
        stateNs,
      ],
      io,
    );
    assert.notEqual(code, 0, "a failed sync fails the command");
    assert.match(
      out,
      new RegExp(
        `^rbac\\.authorization\\.k8s\\.io\\s+ClusterRole\\s+${name}\\s+Failed\\s+.*forbidden: cannot list clusterroles\\.rbac\\.authorization\\.k8s\\.io at the cluster scope`,
        "m",
      ),
    );
    assert.match(out, /^\s+ConfigMap\s+\S+\s+settings\s+Synced\s+.*configmap\/settings created/m);
    assert.ok(token && !`${out}${err}`.includes(token), "the token is never printed");
  });
});
