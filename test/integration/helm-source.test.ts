// Helm charts as a source, on the real control plane: a web app chart with a values file per
// environment is deployed, changed by a values edit, pruned by a values change, and refused with a
// clear error (nothing applied) for a value of the wrong type; a vendored subchart, .Capabilities
// from the destination's discovery, and Helm hook annotations reaching the engine intact.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { environmentDiff } from "../../src/engine/environment-diff.ts";
import { clusterCapabilities } from "../../src/kube/capabilities.ts";
import { type KubeObject, keyOf, keyString } from "../../src/kube/object.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { SourceError } from "../../src/source/errors.ts";
import { type RenderedSource, render } from "../../src/source/render.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { ensureHelm, fixtureFiles } from "../support/helm.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));
const FIXTURES = "test/fixtures/helm";
ensureHelm();

async function controllerFor(repo: TestRepo, name: string, source: Record<string, unknown>) {
  const ns = await cluster.namespace(`helm-${name}`);
  const stateNs = await cluster.stateNamespace("helm-state");
  const controller = new EnvironmentController({
    app: "charts",
    env: envConfig(ns, { name, source, syncPolicy: { automated: { prune: true } } }),
    client: cluster.syncwardClient,
    store: new StateStore(cluster.syncwardClient, stateNs),
    source: new LocalGitSource(repo.dir, cache),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    pollIntervalMs: 0,
    watch: false,
  });
  return { ns, controller };
}

const live = async (apiVersion: string, kind: string, ns: string, name: string) =>
  (await cluster.client.get(apiVersion, kind, ns, name)) as
    | (KubeObject & { data?: Record<string, string>; spec?: Record<string, unknown> })
    | undefined;

/** The repository file an object was rendered from. */
function fileOf(rendered: RenderedSource, name: string, kind = "ConfigMap"): string | undefined {
  const object = rendered.objects.find(
    (o) => o.metadata.name === name && (kind === "ConfigMap" ? true : o.kind === kind),
  );
  return object && rendered.files.get(keyString(keyOf(object)));
}

function envOf(deployment: KubeObject | undefined): Record<string, string> {
  const spec = deployment?.spec as
    | {
        replicas: number;
        template: { spec: { containers: Array<{ env: Array<{ name: string; value: string }> }> } };
      }
    | undefined;
  return Object.fromEntries((spec?.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
}

describe("Helm chart sources", () => {
  it("deploys a chart with each environment's values file, applies a values change, and prunes what a values change removes", async () => {
    const repo = makeRepo(fixtureFiles(`${FIXTURES}/web`, "charts/web"));
    const dev = await controllerFor(repo, "dev", {
      path: "charts/web",
      helm: { valueFiles: ["values-dev.yaml"] },
    });
    const prod = await controllerFor(repo, "prod", {
      path: "charts/web",
      helm: { valueFiles: ["values-prod.yaml", "/env/prod-extra.yaml"], ignoreMissingValueFiles: true },
    });
    try {
      assert.equal((await dev.controller.sync({ trigger: "cli", actor: "alice" })).phase, "Succeeded");
      assert.equal((await prod.controller.sync({ trigger: "cli", actor: "alice" })).phase, "Succeeded");

      // Release name defaults to the environment's name, the release namespace to the destination's.
      const devDeploy = await live("apps/v1", "Deployment", dev.ns, "dev-web");
      assert.deepEqual(envOf(devDeploy), { GREETING: "hello from dev", RELEASE_NAMESPACE: dev.ns });
      assert.equal((devDeploy?.spec as { replicas?: number } | undefined)?.replicas, 1);
      assert.deepEqual((await live("v1", "ConfigMap", dev.ns, "dev-web-flags"))?.data, { newCheckout: "on" });
      const prodDeploy = await live("apps/v1", "Deployment", prod.ns, "prod-web");
      assert.equal(envOf(prodDeploy).GREETING, "hello from prod");
      assert.equal((prodDeploy?.spec as { replicas?: number } | undefined)?.replicas, 3);
      assert.equal(
        await live("v1", "ConfigMap", prod.ns, "prod-web-flags"),
        undefined,
        "flags are off in prod",
      );
      const got = await dev.controller.inspect();
      assert.equal(got.rendered.renderer, "helm");
      assert.deepEqual(got.rendered.chart, { name: "web", version: "1.4.2" });
      assert.equal(fileOf(got.rendered, "dev-web", "Deployment"), "charts/web/templates/deployment.yaml");

      // A values edit is a change like any other: the diff shows the rendered difference, a sync applies it.
      repo.commit({
        "charts/web/values-dev.yaml":
          'greeting: hola from dev\nfeatureFlags:\n  enabled: true\n  flags:\n    newCheckout: "on"\n',
      });
      const diff = environmentDiff((await dev.controller.inspect()).assessment.plan, dev.controller.env);
      assert.match(diff, /-\s+value: hello from dev/);
      assert.match(diff, /\+\s+value: hola from dev/);
      assert.equal((await dev.controller.sync({ trigger: "cli", actor: "alice" })).phase, "Succeeded");
      assert.equal(envOf(await live("apps/v1", "Deployment", dev.ns, "dev-web")).GREETING, "hola from dev");

      // Turning the feature off removes its template's object from the render: pruned.
      repo.commit({ "charts/web/values-dev.yaml": "greeting: hola from dev\n" });
      const pruned = await dev.controller.sync({ trigger: "cli", actor: "alice", prune: true });
      assert.equal(pruned.phase, "Succeeded", pruned.message);
      // Pruned with foreground propagation: the object goes once the API server has finished with it.
      await eventually(
        "dev-web-flags deleted",
        async () => (await live("v1", "ConfigMap", dev.ns, "dev-web-flags")) === undefined,
      );
      assert.ok(await live("apps/v1", "Deployment", dev.ns, "dev-web"), "the rest stays");

      // A value of the wrong type: the chart's values.schema.json names it, and nothing is applied.
      const bad = repo.commit({ "charts/web/values-dev.yaml": 'greeting: broken\nreplicaCount: "three"\n' });
      const refused = await dev.controller.sync({ trigger: "cli", actor: "alice", revision: bad });
      assert.notEqual(refused.phase, "Succeeded");
      assert.match(refused.message, /charts\/web\/values\.schema\.json: .*replicaCount.*want integer/s);
      assert.equal(envOf(await live("apps/v1", "Deployment", dev.ns, "dev-web")).GREETING, "hola from dev");
    } finally {
      await dev.controller.stop();
      await prod.controller.stop();
    }
  });

  it("deploys a chart with a vendored subchart, the parent's values reaching the subchart", async () => {
    const repo = makeRepo(fixtureFiles(`${FIXTURES}/umbrella`, "umbrella"));
    const { ns, controller } = await controllerFor(repo, "umbrella", { path: "umbrella" });
    try {
      const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      assert.deepEqual((await live("v1", "ConfigMap", ns, "umbrella-cache"))?.data, { maxMemory: "64mb" });
      assert.deepEqual((await live("v1", "ConfigMap", ns, "umbrella-app"))?.data, {
        cacheHost: "umbrella-cache",
      });
      const { rendered } = await controller.inspect();
      assert.equal(fileOf(rendered, "umbrella-cache"), "umbrella/charts/cache/templates/configmap.yaml");
    } finally {
      await controller.stop();
    }
  });

  it("gives .Capabilities what the destination serves, and lookup finds nothing (as in Argo CD)", async () => {
    const repo = makeRepo(fixtureFiles(`${FIXTURES}/capabilities`, "caps"));
    const { ns, controller } = await controllerFor(repo, "caps", { path: "caps" });
    try {
      assert.equal((await controller.sync({ trigger: "cli", actor: "alice" })).phase, "Succeeded");
      const version = (await cluster.client.request<{ gitVersion: string }>("GET", "/version")).gitVersion;
      assert.deepEqual((await live("v1", "ConfigMap", ns, "capabilities-report"))?.data, {
        kubeVersion: version,
        hasPodDisruptionBudget: "true",
        hasServiceMonitor: "false",
        lookup: "empty",
      });
      assert.ok(await live("policy/v1", "PodDisruptionBudget", ns, "capabilities-pdb"));
      // The ConfigMap now exists; a render still cannot see the cluster.
      const again = await controller.inspect();
      const report = again.rendered.objects.find((o) => o.metadata.name === "capabilities-report") as
        | (KubeObject & { data: Record<string, string> })
        | undefined;
      assert.equal(report?.data.lookup, "empty");

      // source.helm.apiVersions and kubeVersion override discovery.
      const overridden = await render(repo.dir, "caps", {
        helmContext: {
          releaseName: "caps",
          namespace: ns,
          settings: envConfig(ns, {
            source: {
              path: "caps",
              helm: { kubeVersion: "1.31.0", apiVersions: ["monitoring.coreos.com/v1"] },
            },
          }).source.helm,
          capabilities: () => clusterCapabilities(cluster.syncwardClient),
        },
      });
      const kinds = overridden.objects.map((o) => o.kind).sort();
      assert.deepEqual(kinds, ["ConfigMap", "ServiceMonitor"]);
    } finally {
      await controller.stop();
    }
  });

  it("renders Helm hooks with their annotations intact for the engine's hook rules", async () => {
    const capabilities = await clusterCapabilities(cluster.syncwardClient);
    const rendered = await render(FIXTURES, "hooks", {
      helmContext: { releaseName: "shop", namespace: "shop", capabilities: async () => capabilities },
    });
    const job = rendered.objects.find((o) => o.kind === "Job");
    assert.deepEqual(job?.metadata.annotations, {
      "helm.sh/hook": "pre-install,pre-upgrade",
      "helm.sh/hook-weight": "-5",
      "helm.sh/hook-delete-policy": "before-hook-creation",
    });
    assert.equal(
      rendered.objects.find((o) => o.kind === "Pod")?.metadata.annotations?.["helm.sh/hook"],
      "test",
    );
    assert.equal(fileOf(rendered, "shop-migrate"), "hooks/templates/migrate-job.yaml");
  });

  it("refuses a template error naming the chart file and line, with nothing applied", async () => {
    const repo = makeRepo(fixtureFiles(`${FIXTURES}/web`, "web"));
    const { ns, controller } = await controllerFor(repo, "broken", { path: "web" });
    try {
      const bad = repo.commit({
        "web/templates/broken.yaml": "kind: ConfigMap\nvalue: {{ .Values.nothing.here }}\n",
      });
      const outcome = await controller.sync({ trigger: "cli", actor: "alice", revision: bad });
      assert.notEqual(outcome.phase, "Succeeded");
      assert.match(outcome.message, /web\/templates\/broken\.yaml:2: .*nil pointer evaluating/);
      assert.equal(await live("apps/v1", "Deployment", ns, "broken-web"), undefined);
      await assert.rejects(() => controller.inspect(bad), SourceError);
    } finally {
      await controller.stop();
    }
  });
});
