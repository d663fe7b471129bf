// A custom resource whose health only a Lua check of the operator's knows (Argo CD's
// resource.customizations, from the projects document or --health-config, never the repository's
// config): its wave is held while the script says Progressing, and the next wave is applied once it
// says Healthy. A script that loops forever is Unknown with the reason after its budget, and the
// app's other environment syncs meanwhile. Runs through the Reconciler as syncward's ServiceAccount
// with the CR's rules added as a user would bind them, and through the CLI.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { main } from "../../src/cli/main.ts";
import { parseConfig } from "../../src/config/load.ts";
import type { ProgressEvent } from "../../src/engine/sync.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { type PolicyRule, stateRbacFor } from "../support/syncward-account.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));
const group = `t${Math.random().toString(36).slice(2, 8)}.example.com`;

const HEALTH_LUA = `hs = {}
if obj.status ~= nil and obj.status.phase == "Ready" then
  hs.status = "Healthy"
  hs.message = "gadget ready after " .. obj.status.attempts .. " attempts"
  return hs
end
hs.status = "Progressing"
hs.message = "gadget is " .. ((obj.status or {}).phase or "new")
return hs
`;

const crd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `gadgets.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
};

const manifests = {
  "app/gadget.yaml": `apiVersion: ${group}/v1
kind: Gadget
metadata:
  name: g1
  annotations: {argocd.argoproj.io/sync-wave: "0"}
spec: {size: 3}
`,
  "app/after.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: after
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {a: b}
`,
};

/** The repository's config text: one environment (and `other`, deploying `plain/`, when given). */
function configText(ns: string, syncPolicy: Record<string, unknown> = {}, other?: string): string {
  return stringify({
    environments: [
      { name: "dev", source: { path: "app" }, destination: { namespace: ns }, syncPolicy },
      ...(other ? [{ name: "other", source: { path: "plain" }, destination: { namespace: other } }] : []),
    ],
  });
}

/** The operator's checks: the Gadget script when `script` is given. */
const checksFor = (script: string | undefined) =>
  script ? { [`${group}/Gadget`]: { "health.lua": script } } : undefined;

function reconcilerFor(
  ns: string,
  stateNs: string,
  repoDir: string,
  script: string | undefined,
  client = cluster.syncwardClient,
  syncPolicy: Record<string, unknown> = {},
  other?: string,
) {
  const config = parseConfig(configText(ns, syncPolicy, other));
  return new Reconciler({
    app: `gadgets-${ns}`,
    config,
    healthChecks: checksFor(script),
    // Small, so that the loop below costs little: the bound is what is tested, not its size.
    healthBudget: { instructions: 5_000_000, timeMs: 200, memoryBytes: 64 * 1024 * 1024 },
    client,
    source: new LocalGitSource(repoDir, cache),
    emit: () => {},
    log: pino({ level: "silent" }),
    stateNamespace: stateNs,
    identity: "replica-1",
    leases: false,
    watch: false,
    pollIntervalMs: 0,
  });
}

/**
 * An account with deploy/'s grants plus the Gadget rules and, cluster-wide, the rules of deploy/'s
 * state Role (the Reconciler reads and writes state with the client it syncs with).
 */
function account() {
  const stateRole = stateRbacFor("any").find((o) => o.kind === "Role") as unknown as { rules: PolicyRule[] };
  return cluster.syncwardClientWith([
    { apiGroups: [group], resources: ["gadgets"], verbs: ["get", "list", "watch", "patch", "create"] },
    ...stateRole.rules,
  ]).client;
}

describe("a custom resource judged by a Lua health check", () => {
  before(async () => {
    await cluster.client.apply(crd);
    await eventually("the Gadget CRD to be served", async () => {
      const list = await cluster.client.request<{ resources: Array<{ name: string }> }>(
        "GET",
        `/apis/${group}/v1`,
      );
      return list.resources.some((r) => r.name === "gadgets");
    });
  });
  after(async () => {
    await cluster.client.delete(
      {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        namespace: "",
        name: crd.metadata.name,
        apiVersion: "apiextensions.k8s.io/v1",
      },
      "background",
    );
  });

  it("holds the next wave while the script says Progressing, and applies it once the script says Healthy", async () => {
    const ns = await cluster.namespace("lua");
    const stateNs = await cluster.namespace("lua-state");
    const client = account();
    const repo = makeRepo(manifests);
    const reconciler = reconcilerFor(ns, stateNs, repo.dir, HEALTH_LUA, client);

    const waiting: Array<Extract<ProgressEvent, { type: "waiting" }>> = [];
    const syncing = reconciler.controller("dev").sync({
      trigger: "cli",
      actor: "tester",
      onProgress: (e) => {
        if (e.type === "waiting") waiting.push(e);
      },
    });

    // Wave 0 is applied and waited on: the script reads the Gadget without status as Progressing.
    await eventually("the sync to wait for gadget g1", async () =>
      waiting.some((e) => e.pending.some((p) => p.includes("/g1"))),
    );
    const gadgetResource = `/apis/${group}/v1/namespaces/${ns}/gadgets/g1/status`;
    const setPhase = (phase: string, attempts: number) =>
      cluster.client.request("PATCH", gadgetResource, {
        body: { status: { phase, attempts } },
        contentType: "application/merge-patch+json",
      });
    await setPhase("Provisioning", 1);
    const before = waiting.length;
    await eventually("two more polls of the wave", async () => waiting.length >= before + 2);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "after"), undefined, "wave 1 held back");

    await setPhase("Ready", 3);
    const outcome = await syncing;
    assert.equal(outcome.phase, "Succeeded", outcome.message);
    assert.ok(
      await cluster.client.get("v1", "ConfigMap", ns, "after"),
      "wave 1 applied after wave 0 became Healthy",
    );
    // The result (what check runs and history are written from) carries the script's reading too.
    assert.deepEqual(outcome.resources.find((r) => r.name === "g1")?.health, {
      status: "Progressing",
      message: "gadget is new",
    });
  });

  it("without the check, the same custom resource has no health and does not hold the wave", async () => {
    const ns = await cluster.namespace("nolua");
    const stateNs = await cluster.namespace("nolua-state");
    const client = account();
    const repo = makeRepo(manifests);
    const outcome = await reconcilerFor(ns, stateNs, repo.dir, undefined, client).controller("dev").sync({
      trigger: "cli",
      actor: "tester",
    });
    assert.equal(outcome.phase, "Succeeded", outcome.message);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "after"));
  });

  it("a script that loops forever holds its wave until the healthTimeout, which names the script's error; the other environment syncs meanwhile", async () => {
    const ns = await cluster.namespace("loop");
    const otherNs = await cluster.namespace("loop-other");
    const stateNs = await cluster.namespace("loop-state");
    const repo = makeRepo({
      ...manifests,
      "plain/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n",
    });
    const reconciler = reconcilerFor(
      ns,
      stateNs,
      repo.dir,
      "while true do end",
      account(),
      { healthTimeout: "2s", retry: { limit: 0 } },
      otherNs,
    );
    const [outcome, other] = await Promise.all([
      reconciler.controller("dev").sync({ trigger: "cli", actor: "tester" }),
      reconciler.controller("other").sync({ trigger: "cli", actor: "tester" }),
    ]);
    // The other environment's objects have no script: it syncs while the loop is contained.
    assert.equal(other.phase, "Succeeded", other.message);
    assert.ok(await cluster.client.get("v1", "ConfigMap", otherNs, "settings"));
    assert.equal(outcome.phase, "Failed");
    assert.match(
      outcome.message,
      new RegExp(
        `timed out waiting for gadget\\.${group.replace(/\./g, "\\.")}/g1 to become healthy within 2s .*is Unknown: health\\.lua for ${group.replace(/\./g, "\\.")}/Gadget: exceeded its (time )?budget`,
      ),
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "after"), undefined, "wave 1 not applied");
  });

  it("app get shows the health the operator's script gives (--health-config), and refuses a repository's script", async () => {
    const ns = await cluster.namespace("luacli");
    const stateNs = await cluster.namespace("luacli-state");
    const { kubeconfig } = cluster.syncwardClientWith([
      { apiGroups: [group], resources: ["gadgets"], verbs: ["get", "list", "watch", "patch", "create"] },
      ...(stateRbacFor("any").find((o) => o.kind === "Role") as unknown as { rules: PolicyRule[] }).rules,
    ]);
    const repo = makeRepo({
      ".github/syncward.yml": configText(ns),
      "app/gadget.yaml": manifests["app/gadget.yaml"],
    });
    // The operator's file, outside the checkout.
    const healthConfig = join(mkdtempSync(join(tmpdir(), "syncward-health-")), "health.yml");
    writeFileSync(healthConfig, stringify({ resourceCustomizations: checksFor(HEALTH_LUA) }));
    const common = [
      "--health-config",
      healthConfig,
      "--repo",
      repo.dir,
      "--kubeconfig",
      kubeconfig,
      "--app",
      "gadgets",
      "--state-namespace",
      stateNs,
    ];
    const cli = async (args: string[]) => {
      let out = "";
      let err = "";
      const code = await main(args, {
        out: (t) => (out += `${t}\n`),
        err: (t) => (err += `${t}\n`),
        isTTY: false,
      });
      return { code, out, err };
    };
    assert.equal((await cli(["app", "sync", "dev", ...common])).code, 0);
    const healthOf = async () => {
      const json = JSON.parse((await cli(["app", "get", "dev", "-o", "json", ...common])).out);
      return json.resources.find((r: { name: string }) => r.name === "g1")?.health;
    };
    assert.equal(await healthOf(), "Progressing");
    await cluster.client.request("PATCH", `/apis/${group}/v1/namespaces/${ns}/gadgets/g1/status`, {
      body: { status: { phase: "Ready", attempts: 1 } },
      contentType: "application/merge-patch+json",
    });
    assert.equal(await healthOf(), "Healthy");

    // A checkout whose config carries a script (a pull request's, say) is refused before anything runs.
    const hostile = makeRepo({
      ".github/syncward.yml": `${configText(ns)}resourceCustomizations:\n  ${group}/Gadget:\n    health.lua: 'while true do end'\n`,
      "app/gadget.yaml": manifests["app/gadget.yaml"],
    });
    const refused = await cli([
      "app",
      "get",
      "dev",
      ...common.map((a) => (a === repo.dir ? hostile.dir : a)),
    ]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.err, /resourceCustomizations: is not allowed in a repository's config/);
  });
});
