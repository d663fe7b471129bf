// Argo CD resource hooks on the real control plane: hooks are operations of a sync, created anew
// each time, awaited, cleaned up by their deletion policy, and never managed state.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assess } from "../../src/engine/assess.ts";
import { HOOK_OF_LABEL } from "../../src/engine/hooks/plan.ts";
import type { KindRef } from "../../src/engine/live.ts";
import { type SyncRequest, type SyncTarget, syncEnvironment } from "../../src/engine/sync.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { findOrphans } from "../../src/reconciler/orphans.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { hookFixture } from "../support/hook-fixtures.ts";

const cluster = useCluster();

async function target(fields: Record<string, unknown> = {}): Promise<{ ns: string; target: SyncTarget }> {
  const ns = await cluster.namespace("hooks");
  return { ns, target: { instance: `shop.${ns}`, env: envConfig(ns, fields) } };
}

const inventories = new WeakMap<SyncTarget, KindRef[]>();
async function sync(t: SyncTarget, objects: KubeObject[], extra: Partial<SyncRequest> = {}) {
  const result = await syncEnvironment(cluster.syncwardClient, t, {
    revision: "a".repeat(40),
    objects,
    prune: false,
    inventory: inventories.get(t),
    healthTimeoutMs: 60_000,
    ...extra,
  });
  if (result.inventory.length > 0) inventories.set(t, result.inventory);
  return result;
}

const hooksOf = (r: {
  resources: Array<{ name: string; wave?: number; hook?: { phase: string; outcome: string } }>;
}) => r.resources.filter((x) => x.hook).map((x) => [x.name, x.hook?.phase, x.wave, x.hook?.outcome]);

async function jobs(ns: string): Promise<KubeObject[]> {
  return (await cluster.client.list("batch/v1", "Job", { namespace: ns })).items;
}
const uidOf = async (ns: string, name: string) =>
  (await cluster.client.get("batch/v1", "Job", ns, name))?.metadata.uid;

const release = (tag: string) => (text: string) => text.replaceAll("1.4.0", tag);

describe("hooks", () => {
  it("runs the migration Job of every release anew, runs none for a revision that changes nothing, and one for an explicit sync", async () => {
    const { ns, target: t } = await target();
    const webapp = (tag: string) => hookFixture("webapp", release(tag)).filter((o) => o.metadata.name);

    const first = await sync(t, webapp("1.4.0"), { hooks: "ifChanged" });
    assert.equal(first.phase, "Succeeded", first.message);
    assert.deepEqual(hooksOf(first), [["shop-migrate", "PreSync", 0, "Succeeded"]]);
    const uid1 = await uidOf(ns, "shop-migrate");
    assert.ok(uid1);

    // The Job's template changed: patching it would be refused (immutable); it is recreated.
    const second = await sync(t, webapp("1.5.0"), { hooks: "ifChanged" });
    assert.equal(second.phase, "Succeeded", second.message);
    assert.deepEqual(hooksOf(second), [["shop-migrate", "PreSync", 0, "Succeeded"]]);
    const uid2 = await uidOf(ns, "shop-migrate");
    assert.ok(uid2 && uid2 !== uid1, "BeforeHookCreation deleted the old Job and created a new one");
    const job = await cluster.client.get("batch/v1", "Job", ns, "shop-migrate");
    const spec = job?.spec as { template: { spec: { containers: Array<{ image: string }> } } } | undefined;
    const image = spec?.template.spec.containers[0]?.image;
    assert.equal(image, "registry.example.com/shop/web:1.5.0");
    assert.deepEqual(
      job?.metadata.finalizers ?? [],
      [],
      "its finalizer is released once its outcome is read",
    );

    // A new revision that renders what is deployed: no change, nothing written, no hook.
    const same = await sync(t, webapp("1.5.0"), { hooks: "ifChanged" });
    assert.equal(same.phase, "Succeeded", same.message);
    assert.equal(same.writes, 0);
    assert.deepEqual(hooksOf(same), []);
    assert.equal(await uidOf(ns, "shop-migrate"), uid2);

    // Someone asks for a sync with nothing changed: Argo CD runs the hooks of every sync.
    const manual = await sync(t, webapp("1.5.0"), { hooks: "always" });
    assert.equal(manual.phase, "Succeeded", manual.message);
    assert.deepEqual(hooksOf(manual), [["shop-migrate", "PreSync", 0, "Succeeded"]]);
    assert.equal(manual.totals.created + manual.totals.configured, 0, "only the hook was written");
    const uid3 = await uidOf(ns, "shop-migrate");
    assert.ok(uid3 && uid3 !== uid2);

    // Never managed state: not OutOfSync, not prunable, not an orphan.
    const { plan } = await assess(cluster.syncwardClient, t, {
      revision: "b".repeat(40),
      objects: [],
      prune: true,
      inventory: inventories.get(t),
    });
    assert.deepEqual(
      plan.prunes.map((p) => p.live.metadata.name).sort(),
      ["shop-web", "shop-web", "shop-web-config"],
      "only the managed objects would be pruned",
    );
    const orphans = await findOrphans(cluster.client, t.instance, [ns], new Set());
    assert.ok(!orphans.some((o) => o.object.includes("shop-migrate")), JSON.stringify(orphans));
  });

  it("gives a generateName hook a fresh name per sync and deletes the earlier run before the next", async () => {
    const { ns, target: t } = await target();
    const objects = hookFixture("webapp");
    const first = await sync(t, objects);
    assert.equal(first.phase, "Succeeded", first.message);
    const smoke1 = hooksOf(first).find(([, phase]) => phase === "PostSync")?.[0];
    assert.match(String(smoke1), /^shop-smoke-[a-z0-9]{5}$/);
    const second = await sync(t, objects);
    assert.equal(second.phase, "Succeeded", second.message);
    const smoke2 = hooksOf(second).find(([, phase]) => phase === "PostSync")?.[0];
    assert.match(String(smoke2), /^shop-smoke-/);
    assert.notEqual(smoke2, smoke1);
    const names = (await jobs(ns)).map((j) => j.metadata.name).sort();
    assert.deepEqual(names, ["shop-migrate", String(smoke2)]);
  });

  it("deletes a HookSucceeded hook after it succeeds, runs a multi-phase hook in each phase, and never applies Skip", async () => {
    const { ns, target: t } = await target();
    const objects = hookFixture("maintenance").filter(
      (o) => o.kind !== "Job" || o.metadata.generateName !== "page-oncall-",
    );
    const both: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "sync-marker", annotations: { "argocd.argoproj.io/hook": "PreSync,PostSync" } },
      data: { note: "written before and after" },
    };
    const skipped: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "manual-only", annotations: { "argocd.argoproj.io/hook": "Skip" } },
    };
    const result = await sync(t, [...objects, both, skipped]);
    assert.equal(result.phase, "Succeeded", result.message);
    const ran = hooksOf(result).map(([name, phase, wave, outcome]) => [
      String(name).replace(/-[a-z0-9]{5}$/, "-*"),
      phase,
      wave,
      outcome,
    ]);
    assert.deepEqual(ran, [
      ["sync-marker", "PreSync", 0, "Succeeded"],
      ["maintenance-on-*", "PreSync", 0, "Succeeded"],
      ["storefront-db-migrate", "Sync", 0, "Succeeded"],
      ["sync-marker", "PostSync", 0, "Succeeded"],
      ["maintenance-off-*", "PostSync", 0, "Succeeded"],
    ]);
    // HookSucceeded: the maintenance switches are gone; the Sync-phase migration stays.
    await eventually("the HookSucceeded Jobs to be deleted", async () => {
      const names = (await jobs(ns)).map((j) => j.metadata.name);
      return names.length === 1 && names[0] === "storefront-db-migrate";
    });
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "manual-only"), undefined);
    assert.ok(
      result.resources.some((r) => r.name === "manual-only" && r.message === "not applied: hook: Skip"),
    );
    assert.ok(await cluster.client.get("apps/v1", "Deployment", ns, "storefront-web"));
  });

  it("maps a rendered chart's Helm hooks: pre-upgrade to PreSync at its weight, post-upgrade to PostSync, tests skipped", async () => {
    const { ns, target: t } = await target();
    const result = await sync(t, hookFixture("chart-rendered"));
    assert.equal(result.phase, "Succeeded", result.message);
    assert.deepEqual(hooksOf(result), [
      ["ledger-migrate", "PreSync", -5, "Succeeded"],
      ["ledger-reindex", "PostSync", 3, "Succeeded"],
    ]);
    assert.ok(
      result.resources.some((r) => r.name === "ledger-test-connection" && /Helm test hook/.test(r.message)),
    );
    // hook-succeeded removed the migration; the reindex (default policy) stays until the next run.
    await eventually("hook-succeeded to delete the migration", async () => {
      const names = (await jobs(ns)).map((j) => j.metadata.name);
      return names.length === 1 && names[0] === "ledger-reindex";
    });
  });

  it("keeps a hook Job that ttlSecondsAfterFinished deletes out of self-heal: nothing drifted, nothing re-created", async () => {
    const { ns, target: t } = await target();
    const [migrate] = hookFixture("webapp").filter((o) => o.metadata.name === "shop-migrate");
    const ttl = {
      ...migrate!,
      spec: { ...(migrate!.spec as object), ttlSecondsAfterFinished: 1 },
    } as KubeObject;
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "shop-web-config" },
      data: { a: "1" },
    };
    const result = await sync(t, [cm, ttl]);
    assert.equal(result.phase, "Succeeded", result.message);
    assert.deepEqual(
      hooksOf(result),
      [["shop-migrate", "PreSync", 0, "Succeeded"]],
      "its outcome was read before TTL removed it",
    );
    await eventually(
      "the TTL controller to delete the Job",
      async () => (await uidOf(ns, "shop-migrate")) === undefined,
    );
    const { plan } = await assess(cluster.syncwardClient, t, {
      revision: "a".repeat(40),
      objects: [cm, ttl],
      prune: false,
      inventory: inventories.get(t),
    });
    assert.deepEqual(plan.steps, [], "a missing hook is not drift");
    // A self-heal (only the drifted keys) runs no hooks.
    const heal = await sync(t, [cm, ttl], { only: new Set(), hooks: "always" });
    assert.deepEqual(hooksOf(heal), []);
    assert.equal(heal.writes, 0);
    assert.equal(await uidOf(ns, "shop-migrate"), undefined);
  });

  it("labels what it ran with the environment, so two environments' hooks of one name stay apart", async () => {
    const { ns, target: t } = await target();
    await sync(
      t,
      hookFixture("webapp").filter((o) => o.metadata.name === "shop-migrate"),
    );
    const job = await cluster.client.get("batch/v1", "Job", ns, "shop-migrate");
    assert.equal(job?.metadata.labels?.[HOOK_OF_LABEL], t.instance);
    assert.equal(
      job?.metadata.annotations?.["syncward.dev/tracking-id"],
      undefined,
      "not tracked as managed",
    );
  });
});
