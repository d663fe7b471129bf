// Two clusters, on two real planes (the runner starts the second because this file names
// SYNCWARD_TEST_KUBECONFIG_2): dev deploys to syncward's own cluster, prod to the second one
// through the cluster registry. Each environment's objects land only on its own cluster; drift and
// prune on the second stay there; an unknown destination fails before any write; a cluster Secret
// added while running is used without a restart; a project listing one cluster refuses the other.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { parseConfig } from "../../src/config/load.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { ClusterRegistry } from "../../src/kube/cluster-registry.ts";
import { Clusters } from "../../src/kube/clusters.ts";
import { parseProjects } from "../../src/projects/load.ts";
import { narrowConfig } from "../../src/projects/narrow.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { twoContextKubeconfig, useSecondCluster } from "../support/second-cluster.ts";

const first = useCluster();
const second = useSecondCluster(); // SYNCWARD_TEST_KUBECONFIG_2
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {value: "${value}"}\n`;

const valueOn = async (client: KubeClient, ns: string, name: string) =>
  ((await client.get("v1", "ConfigMap", ns, name)) as { data?: { value?: string } } | undefined)?.data?.value;

/** Both namespaces on both clusters: a write sent to the wrong cluster would succeed, and show. */
async function namespaces(): Promise<{ dev: string; prod: string }> {
  const dev = await first.namespace("mc-dev");
  const prod = await first.namespace("mc-prod");
  await second.namespace(dev);
  await second.namespace(prod);
  return { dev, prod };
}

async function start(yaml: string, files: Record<string, string>, projects?: string) {
  const stateNs = await first.stateNamespace("mc-state");
  const registry = new ClusterRegistry(first.syncwardClient, stateNs);
  await registry.start();
  const clusters = new Clusters({ own: first.syncwardClient, registry });
  const repo = makeRepo({ ...files });
  let config = parseConfig(yaml);
  if (projects) config = narrowConfig(parseProjects(projects, "projects.yaml").projects[0] as never, config);
  const reconciler = new Reconciler({
    app: "shop",
    config,
    client: first.syncwardClient,
    clusters,
    source: new LocalGitSource(repo.dir, cache),
    emit: () => undefined,
    log: pino({ level: process.env.SYNCWARD_TEST_LOG ?? "silent" }),
    stateNamespace: stateNs,
    identity: "mc-test",
    leases: false,
    watch: true,
    pollIntervalMs: 0,
  });
  const stop = async () => {
    await reconciler.stop();
    registry.stop();
    clusters.close();
  };
  return { stateNs, repo, reconciler, registry, clusters, stop };
}

const twoEnvs = (ns: { dev: string; prod: string }, extra = "") => `environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: ${ns.dev}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
  - name: prod
    source: {path: prod}
    destination: {namespace: ${ns.prod}, cluster: second}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
${extra}`;

describe("two clusters", () => {
  it("each environment deploys only to its own cluster; self-heal and prune on the second stay there", async () => {
    const ns = await namespaces();
    const t = await start(twoEnvs(ns), {
      "dev/a.yaml": configMap("settings", "dev-1"),
      "prod/a.yaml": configMap("settings", "prod-1"),
      "prod/b.yaml": configMap("extra", "prod-1"),
    });
    await first.client.apply(second.secretFor("second", t.stateNs) as never);
    // A decoy of the same name on the first cluster, in prod's namespace: prune must not touch it.
    await first.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "extra", namespace: ns.prod },
      data: { value: "decoy" },
    });
    t.reconciler.start();
    try {
      await eventually(
        "dev on the first cluster",
        async () => (await valueOn(first.client, ns.dev, "settings")) === "dev-1",
      );
      await eventually(
        "prod on the second cluster",
        async () => (await valueOn(second.client, ns.prod, "settings")) === "prod-1",
      );
      assert.equal(
        await valueOn(second.client, ns.dev, "settings"),
        undefined,
        "dev is not on the second cluster",
      );
      assert.equal(
        await valueOn(first.client, ns.prod, "settings"),
        undefined,
        "prod is not on the first cluster",
      );

      // Drift on the second cluster is reverted there (its own watch hub saw it).
      const live = await second.client.get("v1", "ConfigMap", ns.prod, "settings");
      await second.client.replace({ ...(live as object), data: { value: "tampered" } } as never);
      await eventually(
        "drift on the second cluster reverted",
        async () => (await valueOn(second.client, ns.prod, "settings")) === "prod-1",
      );

      // Prune on the second cluster deletes there only.
      t.repo.commit({ "prod/b.yaml": null }, "drop extra");
      t.reconciler.controller("prod").nudge("poll", "test");
      await eventually(
        "extra pruned on the second cluster",
        async () => (await valueOn(second.client, ns.prod, "extra")) === undefined,
      );
      assert.equal(
        await valueOn(first.client, ns.prod, "extra"),
        "decoy",
        "the first cluster's object of that name stays",
      );
    } finally {
      await t.stop();
    }
  });

  it("an unknown destination fails before any write on either cluster, naming the clusters that exist; a Secret added later is used without a restart", async () => {
    const ns = await namespaces();
    const t = await start(
      `environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: ${ns.dev}}
    syncPolicy: {automated: {}}
  - name: late
    source: {path: prod}
    destination: {namespace: ${ns.prod}, cluster: late}
    syncPolicy: {automated: {}}
`,
      { "dev/a.yaml": configMap("settings", "dev-1"), "prod/a.yaml": configMap("settings", "late-1") },
    );
    t.reconciler.start();
    try {
      const late = t.reconciler.controller("late");
      const state = await eventually("late fails", async () => {
        const s = await t.reconciler.store.load(late.instance);
        return s.lastError ? s : undefined;
      });
      assert.match(
        state.lastError?.message ?? "",
        /destination cluster "late" is not a cluster syncward knows/,
      );
      assert.equal(state.syncStatus, "Unknown");
      await eventually(
        "dev syncs meanwhile",
        async () => (await valueOn(first.client, ns.dev, "settings")) === "dev-1",
      );
      assert.equal(await valueOn(first.client, ns.prod, "settings"), undefined);
      assert.equal(await valueOn(second.client, ns.prod, "settings"), undefined);

      // The operator registers the cluster: the registry's watch hears it, the environment syncs.
      await first.client.apply(second.secretFor("late", t.stateNs) as never);
      await eventually(
        "late synced on the second cluster",
        async () => (await valueOn(second.client, ns.prod, "settings")) === "late-1",
      );
      assert.equal(await valueOn(first.client, ns.prod, "settings"), undefined);
    } finally {
      await t.stop();
    }
  });

  it("a project that lists only the second cluster refuses an environment on the first", async () => {
    const ns = await namespaces();
    const t = await start(
      twoEnvs(ns),
      { "dev/a.yaml": configMap("settings", "dev-1"), "prod/a.yaml": configMap("settings", "prod-1") },
      "projects: [{name: p, repositories: ['*/*'], destinations: [{namespace: '*', cluster: second}]}]",
    );
    await first.client.apply(second.secretFor("second", t.stateNs) as never);
    t.reconciler.start();
    try {
      await eventually(
        "prod synced",
        async () => (await valueOn(second.client, ns.prod, "settings")) === "prod-1",
      );
      const dev = t.reconciler.controller("dev");
      const state = await eventually("dev refused", async () => {
        const s = await t.reconciler.store.load(dev.instance);
        return s.history.length > 0 ? s : undefined;
      });
      assert.match(state.history[0]?.message ?? "", /not a destination of project p/);
      assert.equal(await valueOn(first.client, ns.dev, "settings"), undefined);
      assert.equal(await valueOn(second.client, ns.dev, "settings"), undefined);
    } finally {
      await t.stop();
    }
  });

  it("the CLI syncs each environment to its kubeconfig context", async () => {
    const ns = await namespaces();
    const stateNs = await first.stateNamespace("mc-cli");
    const kubeconfig = twoContextKubeconfig(
      first.syncwardKubeconfig,
      second.syncwardKubeconfig,
      join(mkdtempSync(join(tmpdir(), "mc-kc-")), "kubeconfig"),
    );
    const repo = makeRepo({
      ".github/syncward.yml": twoEnvs(ns).replace("cluster: second", "context: second"),
      "dev/a.yaml": configMap("settings", "dev-cli"),
      "prod/a.yaml": configMap("settings", "prod-cli"),
    });
    const io: CliIO = { out: () => undefined, err: () => undefined, isTTY: false };
    const common = [
      "--repo",
      repo.dir,
      "--kubeconfig",
      kubeconfig,
      "--app",
      "shop",
      "--state-namespace",
      stateNs,
    ];
    assert.equal(await main(["app", "sync", "prod", ...common], io), 0);
    assert.equal(await main(["app", "sync", "dev", ...common], io), 0);
    assert.equal(await valueOn(second.client, ns.prod, "settings"), "prod-cli");
    assert.equal(await valueOn(first.client, ns.prod, "settings"), undefined);
    assert.equal(await valueOn(first.client, ns.dev, "settings"), "dev-cli");
    assert.equal(await valueOn(second.client, ns.dev, "settings"), undefined);
  });
});
