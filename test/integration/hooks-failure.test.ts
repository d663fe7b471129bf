// Hooks that fail, for real: a private control plane with the controller manager, scheduler and
// kwok, whose stages (tools/cluster/kwok-stages.yaml) end a pod annotated
// `syncward.dev/kwok-outcome: fail` as Failed. The Job controller then marks its hook Job Failed.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type SyncRequest, type SyncTarget, syncEnvironment } from "../../src/engine/sync.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { eventually } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { failing, hookFixture } from "../support/hook-fixtures.ts";
import { usePrivatePlane } from "../support/private-plane.ts";

const plane = usePrivatePlane({ full: true });
let syncward: KubeClient | undefined;
after(() => syncward?.close());
const client = () => {
  syncward ??= KubeClient.fromKubeconfig({ kubeconfig: plane.syncwardKubeconfig });
  return syncward;
};

async function target(): Promise<{ ns: string; target: SyncTarget }> {
  const ns = await plane.namespace("hookfail");
  return { ns, target: { instance: `storefront.${ns}`, env: envConfig(ns) } };
}
const sync = (t: SyncTarget, objects: KubeObject[], extra: Partial<SyncRequest> = {}) =>
  syncEnvironment(client(), t, {
    revision: "c".repeat(40),
    objects,
    prune: false,
    healthTimeoutMs: 60_000,
    ...extra,
  });

const hooksOf = (r: { resources: Array<{ name: string; hook?: { phase: string; outcome: string } }> }) =>
  r.resources
    .filter((x) => x.hook)
    .map((x) => [x.name.replace(/-[a-z0-9]{5}$/, "-*"), x.hook?.phase, x.hook?.outcome]);
const jobNames = async (ns: string) =>
  (await plane.client.list("batch/v1", "Job", { namespace: ns })).items
    .map((j) => j.metadata.name.replace(/-[a-z0-9]{5}$/, "-*"))
    .sort();

describe("a bare Pod as a hook", () => {
  it("is awaited until it Succeeded or Failed (kwok ends it as its annotation asks)", async () => {
    const ns = await plane.namespace("podhook");
    const t: SyncTarget = { instance: `storefront.${ns}`, env: envConfig(ns) };
    const pod = (name: string, outcome: string, phase: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        annotations: { "argocd.argoproj.io/hook": phase, "syncward.dev/kwok-outcome": outcome },
      },
      spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1.36", args: ["true"] }] },
    });
    // Pod hooks need pods create/delete, which deploy/ does not grant: run as cluster-admin here.
    const result = await syncEnvironment(plane.client, t, {
      revision: "e".repeat(40),
      objects: [pod("prewarm", "succeed", "PreSync"), pod("smoke", "fail", "PostSync")],
      prune: false,
      healthTimeoutMs: 60_000,
    });
    assert.equal(result.phase, "Failed");
    assert.deepEqual(hooksOf(result), [
      ["prewarm", "PreSync", "Succeeded"],
      ["smoke", "PostSync", "Failed"],
    ]);
  });
});

describe("hooks that fail", () => {
  it("a failing Sync-wave migration stops the sync before the web tier, keeps the maintenance page up and pages on-call (SyncFail)", async () => {
    const { ns, target: t } = await target();
    const objects = hookFixture("maintenance").map((o) =>
      o.metadata.name === "storefront-db-migrate" ? failing(o) : o,
    );
    const result = await sync(t, objects);
    assert.equal(result.phase, "Failed");
    assert.match(result.message, /Sync wave 0 failed: job\.batch\/storefront-db-migrate hook failed/);
    assert.match(result.message, /SyncFail hooks: page-oncall-[a-z0-9]{5} succeeded/);
    assert.deepEqual(hooksOf(result), [
      ["maintenance-on-*", "PreSync", "Succeeded"],
      ["storefront-db-migrate", "Sync", "Failed"],
      ["maintenance-off-*", "PostSync", "Skipped"],
      ["page-oncall-*", "SyncFail", "Succeeded"],
    ]);
    assert.equal(
      await plane.client.get("apps/v1", "Deployment", ns, "storefront-web"),
      undefined,
      "wave 1 never applied",
    );
    // The failed migration stays for someone to read (no HookFailed policy); the others deleted themselves.
    await eventually("HookSucceeded to delete the switch and the page", async () => {
      const names = await jobNames(ns);
      return names.length === 1 && names[0] === "storefront-db-migrate";
    });
  });

  it("a failing PostSync smoke test fails the sync after everything was applied, and HookFailed deletes it", async () => {
    const { ns, target: t } = await target();
    const [cm] = hookFixture("webapp").filter((o) => o.kind === "ConfigMap");
    const smoke = failing({
      ...hookFixture("webapp").find((o) => o.metadata.generateName === "shop-smoke-")!,
      metadata: {
        name: "shop-smoke-test",
        annotations: {
          "argocd.argoproj.io/hook": "PostSync",
          "argocd.argoproj.io/hook-delete-policy": "HookFailed",
        },
      },
    });
    const syncFail: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "last-failure", annotations: { "argocd.argoproj.io/hook": "SyncFail" } },
      data: { note: "the last sync of shop failed" },
    };
    const result = await sync(t, [cm!, smoke, syncFail]);
    assert.equal(result.phase, "Failed");
    assert.match(result.message, /PostSync wave 0 failed: job\.batch\/shop-smoke-test hook failed/);
    assert.deepEqual(hooksOf(result), [
      ["shop-smoke-test", "PostSync", "Failed"],
      ["last-failure", "SyncFail", "Succeeded"],
    ]);
    assert.ok(
      result.resources.some((r) => r.name === "shop-smoke-test" && r.hook?.deletedBy === "HookFailed"),
    );
    assert.ok(await plane.client.get("v1", "ConfigMap", ns, "shop-web-config"), "the Sync phase was applied");
    assert.ok(await plane.client.get("v1", "ConfigMap", ns, "last-failure"), "SyncFail ran");
    await eventually("HookFailed to delete the smoke test", async () => (await jobNames(ns)).length === 0);
  });
});
