// A replica's membership Lease against the real API server: it announces the replica while it
// runs, belongs to the replica's Pod (so Kubernetes' garbage collector deletes it with the Pod,
// and a Deployment's changing pod names leave nothing behind), and a replica that stops cleanly
// withdraws it and its app Leases, so the others take its apps at once.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import type { KubeObject } from "../../src/kube/object.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { MEMBER_LABEL, memberLeaseName, Shard } from "../../src/reconciler/shard.ts";
import { leaseNameFor } from "../../src/state/lease.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-member-"));

interface Lease extends KubeObject {
  spec?: { holderIdentity?: string };
}

const leaseOf = async (ns: string, name: string) =>
  (await cluster.client.get("coordination.k8s.io/v1", "Lease", ns, name)) as Lease | undefined;

describe("membership Leases", () => {
  it("belong to the replica's Pod and go with it; a clean stop withdraws membership and app Leases", async () => {
    const ns = await cluster.namespace("member-dst");
    const stateNs = await cluster.stateNamespace("member-state");
    const pod = await cluster.client.create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "syncward-abc12", namespace: stateNs },
      spec: { containers: [{ name: "syncward", image: "syncward" }] },
    } as KubeObject);
    const log = pino({ level: "silent" });
    const shard = new Shard({
      client: cluster.syncwardClient,
      namespace: stateNs,
      identity: "syncward-abc12",
      leaseDurationSeconds: 3,
      log,
      settleMs: 0,
      pod: { name: pod.metadata.name, uid: pod.metadata.uid as string },
    });
    const repo = makeRepo({ "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n" });
    const reconciler = new Reconciler({
      app: "member",
      config: { environments: [envConfig(ns, { source: { path: "app" } })] } as never,
      client: cluster.syncwardClient,
      source: new LocalGitSource(repo.dir, cache),
      emit: () => {},
      log,
      stateNamespace: stateNs,
      identity: "syncward-abc12",
      leases: true,
      shard,
      watch: false,
      pollIntervalMs: 0,
    });
    reconciler.start();
    const name = memberLeaseName("syncward-abc12");
    try {
      const member = await eventually("the membership Lease", () => leaseOf(stateNs, name));
      assert.equal(member.spec?.holderIdentity, "syncward-abc12");
      assert.equal(member.metadata.labels?.[MEMBER_LABEL], "true");
      assert.deepEqual(
        (member.metadata.ownerReferences ?? []).map((o) => [o.kind, o.name, o.uid]),
        [["Pod", "syncward-abc12", pod.metadata.uid]],
      );
      await eventually("the app taken", async () => reconciler.active.includes("dev"));
      assert.deepEqual(shard.lastPlan?.members, ["syncward-abc12"]);

      await reconciler.stop();
      await shard.stop();
      const appLease = await leaseOf(stateNs, leaseNameFor("member.app"));
      assert.equal(appLease?.spec?.holderIdentity, "", "the app's Lease handed back");
      assert.equal((await leaseOf(stateNs, name))?.spec?.holderIdentity, "", "membership withdrawn");

      await cluster.client.delete(
        { apiVersion: "v1", group: "", kind: "Pod", namespace: stateNs, name: pod.metadata.name },
        "background",
      );
      await eventually(
        "the garbage collector to delete the membership Lease with its Pod",
        async () => ((await leaseOf(stateNs, name)) === undefined ? true : undefined),
        60_000,
      );
    } finally {
      await reconciler.stop();
      await shard.stop();
    }
  });
});
