// The durable state store against the real API server: round trips, defaults, restarts, and no
// lost updates when two replicas (two clients) write the same environment at once.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { appendHistory } from "../../src/state/history.ts";
import { githubAppId, instanceName } from "../../src/state/identity.ts";
import { StateCorruptError, StateStore, stateConfigMapName } from "../../src/state/store.ts";
import type { HistoryEntry } from "../../src/state/types.ts";
import { useCluster } from "../support/cluster.ts";
import { optionalRules } from "../support/syncward-account.ts";

const cluster = useCluster();

function op(revision: string): Omit<HistoryEntry, "id"> {
  return {
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    revision,
    trigger: "push",
    actor: "octocat",
    result: "Succeeded",
    message: "successfully synced",
    counts: { created: 1, configured: 0, pruned: 0, failed: 0 },
  };
}

describe("StateStore", () => {
  it("loads a fresh default state when none is stored, without writing", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    const before = cluster.syncwardClient.counts.writes;
    assert.deepEqual(await store.load("payments-config.dev"), {
      environment: "payments-config.dev",
      syncStatus: "Unknown",
      history: [],
      pendingApprovals: [],
      selfHeals: {},
    });
    assert.equal(cluster.syncwardClient.counts.writes, before);
    assert.deepEqual(await store.list(), []);
  });

  it("round-trips state through one labelled, annotated ConfigMap per environment", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    const written = await store.update("payments-config.dev", (s) => {
      s.syncStatus = "Synced";
      s.lastSyncedRevision = "a".repeat(40);
      s.freeze = { by: "octocat", at: "2026-11-29T18:00:00Z", reason: "release" };
      s.inventory = [{ apiVersion: "apps/v1", kind: "Deployment" }];
      s.selfHeals["apps/Deployment:shop/web"] = { revision: "a".repeat(40), times: ["2026-11-29T18:00:00Z"] };
    });
    await store.update("payments-config.prod", (s) => ({ ...s, health: "Healthy" }));

    assert.deepEqual(await store.load("payments-config.dev"), written);
    assert.equal(written.freeze?.reason, "release");
    assert.deepEqual(written.inventory, [{ apiVersion: "apps/v1", kind: "Deployment" }]);

    const cm = (await cluster.client.get("v1", "ConfigMap", ns, stateConfigMapName("payments-config.dev"))) as
      | (KubeObject & { data: Record<string, string> })
      | undefined;
    assert.ok(cm, "the state ConfigMap exists");
    assert.match(cm.metadata.name, /^syncward-state-payments-config-dev-[0-9a-f]{10}$/);
    assert.equal(cm.metadata.labels?.["app.kubernetes.io/managed-by"], "syncward");
    assert.equal(cm.metadata.labels?.["syncward.dev/state"], "true");
    assert.equal(cm.metadata.annotations?.["syncward.dev/instance"], "payments-config.dev");
    assert.deepEqual(JSON.parse(cm.data["state.json"] ?? ""), written);

    const all = await store.list();
    assert.deepEqual(
      all.map((s) => [s.environment, s.health ?? s.syncStatus]),
      [
        ["payments-config.dev", "Synced"],
        ["payments-config.prod", "Healthy"],
      ],
    );
  });

  it("keeps instances apart whose names sanitize alike", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    await store.update("shop.dev", (s) => {
      s.health = "dot";
    });
    await store.update("shop-dev", (s) => {
      s.health = "dash";
    });
    assert.equal((await store.load("shop.dev")).health, "dot");
    assert.equal((await store.load("shop-dev")).health, "dash");
  });

  it("writes nothing when the mutation changes nothing", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    await store.update("app.dev", (s) => {
      s.syncStatus = "Synced";
    });
    const before = cluster.syncwardClient.counts.writes;
    await store.update("app.dev", (s) => {
      s.syncStatus = "Synced";
    });
    assert.equal(cluster.syncwardClient.counts.writes, before);
  });

  it("loses no update when two replicas write one environment concurrently", async () => {
    const ns = await cluster.stateNamespace("state");
    const other = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    after(() => other.close());
    const stores = [new StateStore(cluster.syncwardClient, ns), new StateStore(other, ns)];
    // The ConfigMap does not exist yet: the first writers also race on creating it.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stores[i % 2]!.update("payments-config.dev", (s) => {
          s.pendingApprovals.push({ sha: `sha-${i}`, by: `user-${i}`, at: new Date().toISOString() });
        }),
      ),
    );
    const state = await stores[1]!.load("payments-config.dev");
    assert.equal(state.pendingApprovals.length, 20);
    assert.deepEqual(
      state.pendingApprovals.map((a) => a.sha).sort(),
      Array.from({ length: 20 }, (_, i) => `sha-${i}`).sort(),
    );
    // Each update resolved with the state it wrote: one of every size from 1 to 20.
    assert.deepEqual(
      results.map((r) => r.pendingApprovals.length).sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it("survives a restart: a new store with a new client reads what the old one wrote", async () => {
    const ns = await cluster.stateNamespace("state");
    const first = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    await new StateStore(first, ns).update("app.staging", (s) => {
      appendHistory(s, op("b".repeat(40)), 10);
      s.lastSyncedRevision = "b".repeat(40);
    });
    first.close();

    const second = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    after(() => second.close());
    const state = await new StateStore(second, ns).load("app.staging");
    assert.equal(state.lastSyncedRevision, "b".repeat(40));
    assert.deepEqual(
      state.history.map((h) => [h.id, h.revision]),
      [[1, "b".repeat(40)]],
    );
  });

  it("keeps the newest history entries within the limit, ids still increasing", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    for (let i = 1; i <= 7; i++) {
      await store.update("app.prod", (s) => {
        appendHistory(s, op(`rev-${i}`), 3);
      });
    }
    const state = await store.load("app.prod");
    assert.deepEqual(
      state.history.map((h) => [h.id, h.revision]),
      [
        [5, "rev-5"],
        [6, "rev-6"],
        [7, "rev-7"],
      ],
    );
  });

  it("creates its namespace when it does not exist", async () => {
    const ns = `state-new-${randomBytes(3).toString("hex")}`;
    after(() =>
      cluster.client.delete(
        { apiVersion: "v1", group: "", kind: "Namespace", namespace: "", name: ns },
        "background",
      ),
    );
    // deploy/ does not let syncward create namespaces: a clear error says what to do.
    await assert.rejects(
      new StateStore(cluster.syncwardClient, ns).update("app.dev", () => {}),
      new RegExp(
        `namespace ${ns} does not exist and syncward may not create it.*kubectl create namespace ${ns}`,
      ),
    );
    // With deploy/components/cluster-resources bound, it creates the namespace itself.
    const { client } = cluster.syncwardClientWith(optionalRules("cluster-resources.yaml"));
    const store = new StateStore(client, ns);
    await store.update("app.dev", (s) => {
      s.syncStatus = "OutOfSync";
    });
    assert.ok(await cluster.client.get("v1", "Namespace", undefined, ns));
    assert.equal((await store.load("app.dev")).syncStatus, "OutOfSync");
  });

  it("re-reads and re-applies on a conflict, and gives up with a clear error after bounded attempts", async () => {
    const ns = await cluster.stateNamespace("state");
    await new StateStore(cluster.syncwardClient, ns).update("app.dev", () => {});
    // A client whose every PUT is preceded by another writer's PUT: ours always carries a stale
    // resourceVersion until `interfere` runs out.
    let interfere = 0;
    // syncward (the ServiceAccount) writes; the other writer is a fixture.
    const client = Object.create(cluster.syncwardClient) as KubeClient;
    client.replace = async (obj: KubeObject) => {
      if (interfere > 0) {
        interfere--;
        const fresh = (await cluster.client.get("v1", "ConfigMap", ns, obj.metadata.name))!;
        const bumps = Number(fresh.metadata.annotations?.bumps ?? 0) + 1;
        await cluster.client.replace({
          ...fresh,
          metadata: {
            ...fresh.metadata,
            annotations: { ...fresh.metadata.annotations, bumps: String(bumps) },
          },
        });
      }
      return cluster.syncwardClient.replace(obj);
    };
    const store = new StateStore(client, ns, { maxAttempts: 3 });

    let calls = 0;
    interfere = 2;
    const state = await store.update("app.dev", (s) => {
      calls++;
      s.history.push({ id: calls, ...op("rev") });
    });
    assert.equal(calls, 3, "mutate ran once per attempt");
    assert.equal(state.history.length, 1, "each attempt starts from freshly read state");
    assert.deepEqual(await store.load("app.dev"), state);

    calls = 0;
    interfere = 3;
    await assert.rejects(
      store.update("app.dev", (s) => {
        calls++;
        s.syncStatus = "Synced";
      }),
      /could not update the state of app\.dev \(ConfigMap .*\): 3 attempts in a row lost to concurrent writers/,
    );
    assert.equal(calls, 3);
    assert.equal((await store.load("app.dev")).syncStatus, "Unknown");
  });

  it("keeps two repositories whose names once mapped to one instance name apart: their ids name their states", async () => {
    const ns = await cluster.stateNamespace("state");
    // acme/shop-x and acme-shop/x both made the app acme-shop-x; their ids make two instances.
    const victim = new StateStore(cluster.syncwardClient, ns, { repository: "acme/shop-x" });
    const other = new StateStore(cluster.syncwardClient, ns, { repository: "acme-shop/x" });
    const [mine, theirs] = [instanceName(githubAppId(101), "prod"), instanceName(githubAppId(202), "prod")];
    assert.notEqual(stateConfigMapName(mine), stateConfigMapName(theirs));
    await victim.update(mine, (s) => {
      s.freeze = { by: "carol", at: new Date().toISOString(), reason: "release week" };
    });
    await other.update(theirs, (s) => {
      s.pendingApprovals.push({ sha: "a".repeat(40), by: "mallory", at: new Date().toISOString() });
    });
    const kept = await victim.load(mine);
    assert.equal(kept.freeze?.by, "carol");
    assert.deepEqual(kept.pendingApprovals, []);
    assert.equal(kept.repository, "acme/shop-x", "the readable name is recorded beside the state");
    assert.equal((await other.load(theirs)).freeze, undefined);
  });

  it("retires a moved state: out of the listing, marked with where it went, refused by a syncward from before", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns, { repository: "acme/shop" });
    await store.update("acme-shop.prod", (s) => {
      s.freeze = { by: "carol", at: new Date().toISOString(), reason: "release week" };
    });
    await store.update("gh_7.prod", (s) => {
      s.freeze = { by: "carol", at: new Date().toISOString(), reason: "release week" };
    });
    await store.retire("acme-shop.prod", "gh_7.prod");
    assert.deepEqual(
      (await store.list()).map((s) => s.environment),
      ["gh_7.prod"],
    );
    const old = await store.stored("acme-shop.prod");
    assert.equal(old?.movedTo, "gh_7.prod");
    assert.equal(old?.state.freeze?.by, "carol", "the old data is kept for an operator");
    assert.equal(old?.state.repository, "(moved to gh_7.prod)", "an old replica's claim check refuses it");
  });

  it("refuses to overwrite a state it cannot read", async () => {
    const ns = await cluster.stateNamespace("state");
    const store = new StateStore(cluster.syncwardClient, ns);
    await store.update("app.dev", () => {});
    const name = stateConfigMapName("app.dev");
    const cm = (await cluster.client.get("v1", "ConfigMap", ns, name)) as KubeObject & {
      data: Record<string, string>;
    };
    await cluster.client.replace({ ...cm, data: { "state.json": "{not json" } });
    await assert.rejects(store.load("app.dev"), StateCorruptError);
    await assert.rejects(
      store.update("app.dev", (s) => {
        s.syncStatus = "Synced";
      }),
      (err: Error) => err instanceof StateCorruptError && err.message.includes(`${ns}/${name}`),
    );
  });
});
