// Every weakening is a loosening, on the real plane: a gated, self-healing prod whose config
// change only lets more live change stay (trusting more managers, ignoring more, self-heal or
// prune off, Replace=true, /approve opened up, another namespace) renders the same objects, yet
// waits for an approval under the deployed rule instead of taking effect as "no change"; and
// the same change arriving on the deployed commit (from the default branch) is a new release.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { findEnvironment, parseConfig } from "../../src/config/load.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));
const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: '1'}\n";
const GATED = {
  syncPolicy: { automated: { prune: true, selfHeal: true } },
  approval: { users: ["carol"] },
};

const configFile = (ns: string, fields: Record<string, unknown>) =>
  stringify({
    environments: [{ name: "prod", source: { path: "app" }, destination: { namespace: ns }, ...fields }],
  });

async function setup() {
  const ns = await cluster.namespace("weaken");
  const stateNs = await cluster.stateNamespace("weaken-state");
  const repo = makeRepo({ ".github/syncward.yml": configFile(ns, GATED), "app/cm.yaml": cm });
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const events: ReconcilerEvent[] = [];
  const controllerFor = (text: string) =>
    new EnvironmentController({
      app: "weaken",
      env: findEnvironment(parseConfig(text), "prod"),
      client: cluster.syncwardClient,
      store,
      source: new LocalGitSource(repo.dir, cache),
      emit: (e) => events.push(e),
      log: pino({ level: "silent" }),
      pollIntervalMs: 0,
      watch: false,
    });
  const first = controllerFor(configFile(ns, GATED));
  const synced = await first.sync({ trigger: "cli", actor: "admin" });
  assert.equal(synced.phase, "Succeeded", synced.message);
  return { ns, repo, store, events, controllerFor, deployed: repo.head() };
}

const WEAKENINGS: Array<[string, (ns: string) => Record<string, unknown>, RegExp]> = [
  ["trustedManagers: ['*']", () => ({ trustedManagers: ["*"] }), /trustedManagers widened/],
  [
    "ignoreDifferences on the pod template",
    () => ({ ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/template"] }] }),
    /ignoreDifferences widened/,
  ],
  [
    "managedFieldsManagers",
    () => ({ ignoreDifferences: [{ group: "*", kind: "*", managedFieldsManagers: ["kubectl-edit"] }] }),
    /managedFieldsManagers widened/,
  ],
  [
    "selfHeal off",
    () => ({ syncPolicy: { automated: { prune: true, selfHeal: false } } }),
    /selfHeal turned off/,
  ],
  ["prune off", () => ({ syncPolicy: { automated: { prune: false, selfHeal: true } } }), /prune turned off/],
  [
    "Replace=true",
    () => ({ syncPolicy: { ...GATED.syncPolicy, syncOptions: ["Replace=true"] } }),
    /Replace=true turned on/,
  ],
  ["/approve for readers", () => ({ commands: { approve: "read" } }), /\/approve now needs read/],
  [
    "policy.namespaces widened",
    (ns) => ({ policy: { namespaces: [ns, `${ns}-more`] } }), // kube-public is reserved: refused outright
    /namespaces allowed/,
  ],
];

describe("a gated prod holds every weakening for an approval under the deployed rule", () => {
  for (const [name, change, reason] of WEAKENINGS)
    it(`${name}: a merge that renders nothing new waits for approval`, async () => {
      const { ns, repo, store, events, controllerFor } = await setup();
      const text = configFile(ns, { ...GATED, ...change(ns) });
      const merge = repo.commit({ ".github/syncward.yml": text });
      const reloaded = controllerFor(text);
      reloaded.nudge("merge", "mallory");
      await reloaded.idle();
      const state = await store.load(reloaded.instance);
      assert.notEqual(state.lastSyncedRevision, merge, "not advanced as 'no change'");
      assert.ok(!events.some((e) => e.type === "unchanged"));
      const waiting = events.find((e) => e.type === "awaitingApproval" && e.revision === merge);
      assert.ok(waiting && waiting.type === "awaitingApproval", JSON.stringify(events.map((e) => e.type)));
      assert.match(waiting.reason ?? "", reason);
      // Approved under the old rule: it deploys, and the new config is the deployed one.
      await reloaded.approve(merge, "carol", 7);
      await reloaded.idle();
      assert.equal((await store.load(reloaded.instance)).lastSyncedRevision, merge);
    });

  it("the same weakening on the deployed commit (read from the default branch) is a new release", async () => {
    const { ns, store, events, controllerFor, deployed } = await setup();
    const loosened = controllerFor(configFile(ns, { ...GATED, trustedManagers: ["*"] }));
    loosened.nudge("poll", "syncward");
    await loosened.idle();
    const waiting = events.find((e) => e.type === "awaitingApproval" && e.revision === deployed);
    assert.ok(waiting && waiting.type === "awaitingApproval", JSON.stringify(events.map((e) => e.type)));
    assert.match(waiting.reason ?? "", /trustedManagers widened/);
    const state = await store.load(loosened.instance);
    assert.deepEqual(
      state.deployedRules?.driftPolicy?.trustedManagers,
      [],
      "the deployed rules trust nobody extra",
    );
    await loosened.approve(deployed, "carol", 7);
    await loosened.idle();
    const after = await store.load(loosened.instance);
    assert.deepEqual(after.deployedRules?.driftPolicy?.trustedManagers, ["*"], "in force once approved");
  });
});
