// Upgrading a cluster that holds state under the names from before identities (`<owner>-<repo>.<env>`):
// on the real plane, the old naming writes its state and tracked objects, then the new code starts.
// History, approvals, pins, the freeze and the policy override are intact under the identity's
// name, the objects are the same objects (nothing pruned or recreated) tracked by the new name,
// the old state is retired only after the new one is written, and a repository that shared the
// old name takes nothing of it.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import { INSTANCE_LABEL, TRACKING_ANNOTATION } from "../../src/engine/tracking.ts";
import type { LegacyName } from "../../src/reconciler/identity-upgrade.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { githubAppId, legacyAppName } from "../../src/state/identity.ts";
import { STATE_LABEL, stateConfigMapName } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "1"}\n`;

function reconciler(o: {
  app: string;
  repository: string;
  legacy?: LegacyName;
  ns: string;
  stateNs: string;
  dir: string;
}) {
  const config = parseConfig(
    stringify({
      environments: [
        {
          name: "dev",
          source: { path: "app" },
          destination: { namespace: o.ns },
          syncPolicy: { automated: { prune: true } },
        },
      ],
    }),
  );
  return new Reconciler({
    app: o.app,
    repository: o.repository,
    legacy: o.legacy,
    config,
    client: cluster.syncwardClient,
    source: new LocalGitSource(o.dir, cache),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    stateNamespace: o.stateNs,
    identity: "test",
    leases: false,
    watch: false,
    pollIntervalMs: 0,
  });
}

describe("upgrading state written under the names from before identities", () => {
  it("moves history, approvals, pins and the freeze to the repository's id, keeps its objects, and gives nothing to a repository that shared the old name", async () => {
    const ns = await cluster.namespace("upgrade");
    const stateNs = await cluster.stateNamespace("upgrade-state");
    const repo = makeRepo({ "app/settings.yaml": cm("settings"), "app/flags.yaml": cm("flags") });
    // Today's naming: acme/shop-x is the app acme-shop-x, its dev the instance acme-shop-x.dev.
    const oldApp = legacyAppName("acme", "shop-x");
    const old = reconciler({ app: oldApp, repository: "acme/shop-x", ns, stateNs, dir: repo.dir });
    const first = await old.controller("dev").sync({ trigger: "cli", actor: "alice" });
    assert.equal(first.phase, "Succeeded", first.message);
    const at = new Date().toISOString();
    await old.store.update("acme-shop-x.dev", (s) => {
      s.freeze = { by: "carol", at, reason: "release night" };
      s.pendingApprovals.push({ sha: repo.head(), by: "bob", at });
      s.approverIds = { bob: 4242 };
      s.policyOverride = { automated: false, prune: false, selfHeal: false, by: "carol", at };
    });
    const before = await old.store.load("acme-shop-x.dev");
    const uid = async (name: string) => (await cluster.client.get("v1", "ConfigMap", ns, name))?.metadata.uid;
    const uids = { settings: await uid("settings"), flags: await uid("flags") };

    // acme-shop/x had the same old name: it starts first, and takes nothing.
    const otherRepo = makeRepo({ "app/other.yaml": cm("other") });
    const other = reconciler({
      app: githubAppId(2002),
      repository: "acme-shop/x",
      legacy: { app: legacyAppName("acme-shop", "x"), repository: "acme-shop/x" },
      ns,
      stateNs,
      dir: otherRepo.dir,
    });
    other.start();
    try {
      await eventually("the other repository running", async () => other.active.length === 1);
      const synced = await other.controller("dev").sync({ trigger: "cli", actor: "dave" });
      assert.equal(synced.totals.pruned, 0, "the other repository prunes nothing of acme/shop-x");
      assert.equal((await other.store.load("gh_2002.dev")).freeze, undefined, "no freeze taken over");
      assert.equal((await old.store.stored("acme-shop-x.dev"))?.movedTo, undefined, "the old state stands");
    } finally {
      await other.stop();
    }

    // The new code starts for acme/shop-x (GitHub's id 1001).
    const upgraded = reconciler({
      app: githubAppId(1001),
      repository: "acme/shop-x",
      legacy: { app: oldApp, repository: "acme/shop-x" },
      ns,
      stateNs,
      dir: repo.dir,
    });
    upgraded.start();
    try {
      await eventually("the upgraded app running", async () => upgraded.active.length === 1);
      const controller = upgraded.controller("dev");
      await controller.idle();
      assert.equal(controller.instance, "gh_1001.dev");
      const after = await upgraded.store.load("gh_1001.dev");
      assert.deepEqual(after.history, before.history, "history intact");
      assert.deepEqual(after.pendingApprovals, before.pendingApprovals, "approvals intact");
      assert.deepEqual(after.freeze, before.freeze, "still frozen");
      assert.deepEqual(after.approverIds, before.approverIds, "pins intact");
      assert.deepEqual(after.policyOverride, before.policyOverride);
      assert.equal(after.lastSyncedRevision, before.lastSyncedRevision);
      for (const name of ["settings", "flags"] as const) {
        const obj = await cluster.client.get("v1", "ConfigMap", ns, name);
        assert.equal(obj?.metadata.uid, uids[name], `${name} is the same object`);
        assert.equal(
          obj?.metadata.annotations?.[TRACKING_ANNOTATION],
          `gh_1001.dev:/ConfigMap:${ns}/${name}`,
        );
        assert.equal(obj?.metadata.labels?.[INSTANCE_LABEL], "gh_1001.dev");
      }
      assert.ok(
        await cluster.client.get("v1", "ConfigMap", ns, "other"),
        "the other repository's object stays",
      );
      // The old state is retired, and only after the new one was written (etcd revisions).
      const oldCm = await cluster.client.get(
        "v1",
        "ConfigMap",
        stateNs,
        stateConfigMapName("acme-shop-x.dev"),
      );
      const newCm = await cluster.client.get("v1", "ConfigMap", stateNs, stateConfigMapName("gh_1001.dev"));
      assert.equal(oldCm?.metadata.labels?.[STATE_LABEL], "retired");
      assert.equal(oldCm?.metadata.annotations?.["syncward.dev/moved-to"], "gh_1001.dev");
      assert.ok(
        Number(oldCm?.metadata.resourceVersion) > Number(newCm?.metadata.resourceVersion),
        "retired after the new state was written",
      );
      assert.deepEqual(
        (await upgraded.store.list()).map((s) => s.environment),
        ["gh_1001.dev", "gh_2002.dev"],
        "the retired state is no longer listed",
      );
      // The first sync under the identity writes nothing and prunes nothing.
      const outcome = await controller.sync({ trigger: "cli", actor: "alice", ignoreFreeze: true });
      assert.equal(outcome.phase, "Succeeded", outcome.message);
      assert.equal(outcome.writes, 0);
      assert.equal(outcome.totals.pruned, 0);
      assert.equal(await uid("settings"), uids.settings);
    } finally {
      await upgraded.stop();
    }
    // Started again, nothing moves twice.
    const again = reconciler({
      app: githubAppId(1001),
      repository: "acme/shop-x",
      legacy: { app: oldApp, repository: "acme/shop-x" },
      ns,
      stateNs,
      dir: repo.dir,
    });
    await again.upgrade();
    assert.equal((await again.store.load("gh_1001.dev")).history.length, before.history.length + 1);
  });
});
