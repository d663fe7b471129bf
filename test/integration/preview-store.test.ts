// Preview records on a real API server: a round trip, listing only preview records, and no lost
// update when two writers replace the same record from the same read.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  PreviewConflictError,
  type PreviewRecord,
  PreviewStore,
  previewKey,
} from "../../src/state/preview-store.ts";
import { StateStore } from "../../src/state/store.ts";
import { useCluster } from "../support/cluster.ts";

const cluster = useCluster();

function record(pull: number): PreviewRecord {
  const now = new Date().toISOString();
  return {
    key: previewKey("Acme/Payments", pull, "dev"),
    repository: { owner: "Acme", repo: "Payments", id: 42 },
    installation: 7,
    pull,
    from: "dev",
    namespace: `payments-pr-${pull}`,
    head: { branch: "feature", sha: "a".repeat(40) },
    phase: "queued",
    requestedAt: now,
    lastMovedAt: now,
    attempts: 0,
  };
}

describe("PreviewStore", () => {
  it("stores, lists (only preview records), replaces and deletes a record", async () => {
    const ns = await cluster.stateNamespace("pvrec");
    const store = new PreviewStore(cluster.syncwardClient, ns);
    // An environment's state in the same namespace is not a preview record.
    await new StateStore(cluster.syncwardClient, ns).update("x.dev", (s) => s);
    assert.equal(await store.get(record(1).key), undefined);
    const first = await store.put(record(1));
    await store.put(record(2));
    const listed = await store.list();
    assert.deepEqual(listed.map((s) => s.record.pull).sort(), [1, 2]);
    const live = { ...first.record, phase: "live" as const, namespaceUid: "uid-1", deploymentId: 9 };
    await store.put(live, first.resourceVersion);
    assert.deepEqual((await store.get(live.key))?.record, live);
    assert.equal(await store.delete(live.key), true);
    assert.equal(await store.delete(live.key), false);
    assert.deepEqual(
      (await store.list()).map((s) => s.record.pull),
      [2],
    );
  });

  it("refuses a second create and a replace from a stale read: no update is lost", async () => {
    const ns = await cluster.stateNamespace("pvrec");
    const store = new PreviewStore(cluster.syncwardClient, ns);
    const read = await store.put(record(3));
    await assert.rejects(store.put(record(3)), PreviewConflictError);
    await store.put({ ...read.record, phase: "live" }, read.resourceVersion);
    await assert.rejects(
      store.put({ ...read.record, phase: "tearingDown" }, read.resourceVersion),
      PreviewConflictError,
    );
    assert.equal((await store.get(read.record.key))?.record.phase, "live");
  });
});
