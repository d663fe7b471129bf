import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient } from "../../../src/kube/client.ts";
import { AppStatusFollower } from "../../../src/observability/app-status-follower.ts";
import { createMetrics } from "../../../src/observability/metrics.ts";
import { type Placement, placementOf } from "../../../src/observability/placement.ts";

const REV = "0123456789abcdef0123456789abcdef01234567";
const base = { instance: "shop.prod", env: "prod", revision: REV };

/** The syncward_app_info lines of a scrape. */
async function info(m: ReturnType<typeof createMetrics>): Promise<string[]> {
  return (await m.registry.metrics()).split("\n").filter((l) => l.startsWith("syncward_app_info{"));
}

describe("placementOf", () => {
  const table: Array<[string, Parameters<typeof placementOf>[0], Placement]> = [
    [
      "no cluster named: syncward's own",
      { destination: { namespace: "shop" } },
      { cluster: "kind-main", namespace: "shop" },
    ],
    [
      "a registry cluster, under a project",
      { destination: { namespace: "shop", cluster: "eu-prod" }, project: { name: "payments" } },
      { project: "payments", cluster: "eu-prod", namespace: "shop" },
    ],
    [
      "a kubeconfig context",
      { destination: { namespace: "x", context: "edge" } },
      { cluster: "edge", namespace: "x" },
    ],
    [
      "the Pod's own cluster",
      { destination: { namespace: "x", inCluster: true } },
      { cluster: "in-cluster", namespace: "x" },
    ],
  ];
  for (const [name, env, expected] of table)
    it(name, () => assert.deepEqual(placementOf(env, "kind-main"), expected));
});

describe("syncward_app_info placement labels", () => {
  const prod: Placement = { project: "payments", cluster: "eu-prod", namespace: "shop" };

  it("labels the series with project, cluster and destination namespace from the event", async () => {
    const m = createMetrics({ defaultMetrics: false, durations: false });
    m.recordEvent({ ...base, type: "outOfSync", drifted: ["x"], requiresPruning: [], reason: "" }, prod);
    m.recordEvent(
      { ...base, instance: "shop.dev", env: "dev", type: "stuck", reason: "boom" },
      { cluster: "kind-main", namespace: "shop-dev" },
    );
    assert.deepEqual(await info(m), [
      'syncward_app_info{app="shop",environment="prod",project="payments",cluster="eu-prod",destination_namespace="shop",sync_status="OutOfSync",health_status="Unknown"} 1',
      'syncward_app_info{app="shop",environment="dev",project="",cluster="kind-main",destination_namespace="shop-dev",sync_status="Unknown",health_status="Degraded"} 1',
    ]);
  });

  it("keeps the last placement for an event without one, and moves the series when it changes", async () => {
    const m = createMetrics({ defaultMetrics: false, durations: false });
    m.setAppStatus(
      { app: "shop", environment: "prod", placement: prod },
      { sync: "Synced", health: "Healthy" },
    );
    m.recordEvent({ ...base, type: "stuck", reason: "boom" });
    assert.deepEqual(await info(m), [
      'syncward_app_info{app="shop",environment="prod",project="payments",cluster="eu-prod",destination_namespace="shop",sync_status="Synced",health_status="Degraded"} 1',
    ]);
    // The config moved the environment to another cluster: one series, at the new place.
    m.setAppStatus(
      { app: "shop", environment: "prod", placement: { ...prod, cluster: "us-prod" } },
      { sync: "Synced", health: "Degraded" },
    );
    assert.deepEqual(await info(m), [
      'syncward_app_info{app="shop",environment="prod",project="payments",cluster="us-prod",destination_namespace="shop",sync_status="Synced",health_status="Degraded"} 1',
    ]);
    m.setAppStatus({ app: "shop", environment: "prod" }, undefined);
    assert.deepEqual(await info(m), []);
  });

  it("labels the stored state's series with the placement the runtime tracks", async () => {
    const m = createMetrics({ defaultMetrics: false, durations: false });
    const follower = new AppStatusFollower({ client: {} as KubeClient, namespace: "syncward", metrics: m });
    follower.track("shop", [{ name: "prod", placement: prod }, "dev"]);
    assert.deepEqual(await info(m), [
      'syncward_app_info{app="shop",environment="prod",project="payments",cluster="eu-prod",destination_namespace="shop",sync_status="Unknown",health_status="Unknown"} 1',
      'syncward_app_info{app="shop",environment="dev",sync_status="Unknown",health_status="Unknown"} 1',
    ]);
    follower.untrack("shop");
    assert.deepEqual(await info(m), []);
  });
});
