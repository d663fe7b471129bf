// Two repositories whose names once made one app (acme-payments/api and acme/payments-api were
// both acme-payments-api), and one repository whose long environment names were once cut to one
// instance, on the real plane: each is its own app and environment, so neither's sync prunes or
// adopts the other's objects, and their states stay apart.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import { TRACKING_ANNOTATION } from "../../src/engine/tracking.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { githubAppId, legacyAppName, legacyInstanceName } from "../../src/state/identity.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "1"}\n`;

function reconciler(o: {
  id: number;
  repository: string;
  ns: string;
  stateNs: string;
  envs: string[];
  files: Record<string, string>;
}) {
  const repo = makeRepo(o.files);
  const config = parseConfig(
    stringify({
      environments: o.envs.map((name) => ({
        name,
        source: { path: name },
        destination: { namespace: o.ns },
        syncPolicy: { automated: { prune: true } },
      })),
    }),
  );
  const [owner = "", name = ""] = o.repository.split("/");
  return new Reconciler({
    app: githubAppId(o.id),
    repository: o.repository,
    legacy: { app: legacyAppName(owner, name), repository: o.repository },
    config,
    client: cluster.syncwardClient,
    source: new LocalGitSource(repo.dir, cache),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    stateNamespace: o.stateNs,
    identity: "test",
    leases: false,
    watch: false,
    pollIntervalMs: 0,
  });
}

const names = async (ns: string) =>
  (await cluster.client.list("v1", "ConfigMap", { namespace: ns })).items
    .map((o) => o.metadata.name)
    .filter((n) => n !== "kube-root-ca.crt")
    .sort();

describe("identities that cannot collide", () => {
  it("two repositories whose names once made one app both sync with prune, and neither prunes the other's objects", async () => {
    const ns = await cluster.namespace("collide");
    const stateNs = await cluster.stateNamespace("collide-state");
    assert.equal(legacyAppName("acme-payments", "api"), legacyAppName("acme", "payments-api"));
    const a = reconciler({
      id: 1001,
      repository: "acme-payments/api",
      ns,
      stateNs,
      envs: ["prod"],
      files: { "prod/a.yaml": cm("from-a") },
    });
    const b = reconciler({
      id: 2002,
      repository: "acme/payments-api",
      ns,
      stateNs,
      envs: ["prod"],
      files: { "prod/b.yaml": cm("from-b") },
    });
    assert.notEqual(a.controller("prod").instance, b.controller("prod").instance);
    for (const r of [a, b, a]) {
      const outcome = await r.controller("prod").sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      assert.equal(outcome.totals.pruned, 0, "nothing of the other repository is pruned");
    }
    assert.deepEqual(await names(ns), ["from-a", "from-b"]);
    const tracked = await cluster.client.get("v1", "ConfigMap", ns, "from-b");
    assert.equal(
      tracked?.metadata.annotations?.[TRACKING_ANNOTATION],
      `gh_2002.prod:/ConfigMap:${ns}/from-b`,
      "b's object is tracked by b's id",
    );
    const [stateA, stateB] = [await a.store.load("gh_1001.prod"), await b.store.load("gh_2002.prod")];
    assert.equal(stateA.history.length, 2);
    assert.equal(stateB.history.length, 1);
    assert.equal(stateA.repository, "acme-payments/api");
    assert.equal(stateB.repository, "acme/payments-api");
  });

  it("a long repository with two long environment names has two instances, each syncing its own objects", async () => {
    const ns = await cluster.namespace("long");
    const stateNs = await cluster.stateNamespace("long-state");
    const repository = "acme/platform-payments-settlement-reconciliation-service";
    // Before identities both environments were one instance (cut at 63 characters).
    const legacy = legacyAppName("acme", "platform-payments-settlement-reconciliation-service");
    const short = ["production-eu-west-1", "production-eu-west-2"];
    assert.equal(
      legacyInstanceName(legacy, short[0] as string),
      legacyInstanceName(legacy, short[1] as string),
    );
    // Names long enough that even the identity's instance name has to be cut (and hashed).
    const envs = short.map((e) => `${e}-settlement-reconciliation-canary`);
    const r = reconciler({
      id: 987654321,
      repository,
      ns,
      stateNs,
      envs: [...short, ...envs],
      files: Object.fromEntries([...short, ...envs].map((e, i) => [`${e}/cm.yaml`, cm(`settings-${i}`)])),
    });
    const instances = r.environments.map((c) => c.instance);
    assert.equal(new Set(instances).size, 4, instances.join(", "));
    for (const i of instances) assert.ok(i.length <= 63, i);
    for (const c of [...r.environments, ...r.environments]) {
      const outcome = await c.sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      assert.equal(outcome.totals.pruned, 0);
    }
    assert.deepEqual(await names(ns), ["settings-0", "settings-1", "settings-2", "settings-3"]);
    for (const c of r.environments) assert.equal((await r.store.load(c.instance)).history.length, 2);
  });
});
