// Leases against the real API server: two replicas never hold one lease at once, an abandoned
// lease is taken over after its duration, a released one at once, and a stolen one is noticed.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { LeaseLock, leaseNameFor, microTime, parseMicroTime } from "../../src/state/lease.ts";
import { eventually, useCluster } from "../support/cluster.ts";

const cluster = useCluster();
// Both replicas are syncward's ServiceAccount (deploy/'s state Role); the second talks through a
// connection of its own, as another process would.
const other = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
after(() => other.close());

interface Lease extends KubeObject {
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function leaseOf(ns: string, name: string): Promise<Lease> {
  const lease = (await cluster.client.get("coordination.k8s.io/v1", "Lease", ns, name)) as Lease | undefined;
  assert.ok(lease, `Lease ${ns}/${name} exists`);
  return lease;
}

function pair(ns: string, name = leaseNameFor("payments-config.dev")): [LeaseLock, LeaseLock] {
  const options = { leaseDurationSeconds: 2 };
  return [
    new LeaseLock(cluster.syncwardClient, ns, name, "replica-a", options),
    new LeaseLock(other, ns, name, "replica-b", options),
  ];
}

describe("LeaseLock", () => {
  it("the first replica acquires; the second cannot while it is held", async () => {
    const ns = await cluster.stateNamespace("lease");
    const [a, b] = pair(ns);
    assert.equal(a.held, false);
    assert.equal(await a.tryAcquire(), true);
    assert.equal(a.held, true);
    assert.equal(await b.tryAcquire(), false);
    assert.equal(b.held, false);

    const lease = await leaseOf(ns, a.name);
    assert.equal(lease.spec.holderIdentity, "replica-a");
    assert.equal(lease.spec.leaseDurationSeconds, 2);
    assert.equal(lease.spec.leaseTransitions, 0);
    assert.match(lease.spec.acquireTime ?? "", MICRO_TIME);
    assert.match(lease.spec.renewTime ?? "", MICRO_TIME);

    // The holder keeps renewing: the other replica stays out well past one lease duration.
    for (let i = 0; i < 5; i++) {
      await sleep(700);
      assert.equal(await a.renew(), true);
      assert.equal(await b.tryAcquire(), false);
    }
    const renewed = await leaseOf(ns, a.name);
    assert.equal(renewed.spec.acquireTime, lease.spec.acquireTime, "renewing keeps acquireTime");
    assert.ok(parseMicroTime(renewed.spec.renewTime) > parseMicroTime(lease.spec.renewTime));
    assert.equal(renewed.spec.leaseTransitions, 0);
    // Acquiring again while holding is a renewal.
    assert.equal(await a.tryAcquire(), true);
    assert.equal((await leaseOf(ns, a.name)).spec.leaseTransitions, 0);
  });

  it("the second replica takes over once the first stops renewing", async () => {
    const ns = await cluster.stateNamespace("lease");
    const [a, b] = pair(ns);
    assert.equal(await a.tryAcquire(), true);
    const started = Date.now();
    assert.equal(await b.tryAcquire(), false);
    await eventually("replica-b to take the abandoned lease", () => b.tryAcquire(), 10_000);
    assert.ok(Date.now() - started >= 2_000, "not before the lease duration has passed");
    assert.equal(b.held, true);

    const lease = await leaseOf(ns, b.name);
    assert.equal(lease.spec.holderIdentity, "replica-b");
    assert.equal(lease.spec.leaseTransitions, 1);
    assert.equal(lease.spec.acquireTime, lease.spec.renewTime, "a takeover sets acquireTime");

    // The old holder learns it lost the lease and cannot take it back while b renews.
    assert.equal(await a.renew(), false);
    assert.equal(a.held, false);
    assert.equal(await a.tryAcquire(), false);
  });

  it("release lets the other replica acquire at once", async () => {
    const ns = await cluster.stateNamespace("lease");
    const [a, b] = pair(ns);
    assert.equal(await a.tryAcquire(), true);
    assert.equal(await b.tryAcquire(), false);
    await a.release();
    assert.equal(a.held, false);
    assert.equal((await leaseOf(ns, a.name)).spec.holderIdentity ?? "", "");
    assert.equal(await b.tryAcquire(), true);
    const lease = await leaseOf(ns, b.name);
    assert.equal(lease.spec.holderIdentity, "replica-b");
    assert.equal(lease.spec.leaseDurationSeconds, 2);
    assert.equal(lease.spec.leaseTransitions, 1);
  });

  it("a release that meets another replica's write to the Lease (its repository mark) retries: the other replica need not wait out the lease", async () => {
    const ns = await cluster.stateNamespace("lease");
    const name = leaseNameFor("payments-config.dev");
    // Armed, the holder's next replace is preceded by another process marking the Lease: a real 409.
    let armed = false;
    const racing = Object.create(cluster.syncwardClient) as KubeClient;
    racing.replace = async (obj) => {
      if (armed && obj.metadata.name === name) {
        armed = false;
        // As syncward marks a Lease (it may update Leases, not patch them): read, then replace.
        const lease = await leaseOf(ns, name);
        await other.replace({
          ...lease,
          metadata: { ...lease.metadata, annotations: { "syncward.dev/repository": "acme/shop" } },
        });
      }
      return cluster.syncwardClient.replace(obj);
    };
    const a = new LeaseLock(racing, ns, name, "replica-a", { leaseDurationSeconds: 30 });
    const b = new LeaseLock(other, ns, name, "replica-b", { leaseDurationSeconds: 30 });
    assert.equal(await a.tryAcquire(), true);
    armed = true;
    await a.release();
    assert.equal(armed, false, "the other write came between the holder's read and its replace");
    const lease = await leaseOf(ns, name);
    assert.equal(lease.spec.holderIdentity ?? "", "", "released despite the conflict");
    assert.equal(lease.metadata.annotations?.["syncward.dev/repository"], "acme/shop", "the mark kept");
    assert.equal(await b.tryAcquire(), true, "taken at once, not after 30 s");
  });

  it("a renewal of a Lease nobody else wrote is one request; one someone else wrote since is read first and stays ours; one taken is lost", async () => {
    const ns = await cluster.stateNamespace("lease");
    const name = leaseNameFor("payments-config.dev");
    // A client of its own, so its request counts are this holder's alone.
    const own = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    try {
      const a = new LeaseLock(own, ns, name, "replica-a", { leaseDurationSeconds: 2 });
      assert.equal(await a.tryAcquire(), true);
      const before = { ...own.counts.byVerb };
      const renewTimes = [(await leaseOf(ns, name)).spec.renewTime];
      for (let i = 0; i < 3; i++) {
        await sleep(5);
        assert.equal(await a.renew(), true);
        renewTimes.push((await leaseOf(ns, name)).spec.renewTime);
      }
      assert.deepEqual(
        {
          get: (own.counts.byVerb.GET ?? 0) - (before.GET ?? 0),
          put: (own.counts.byVerb.PUT ?? 0) - (before.PUT ?? 0),
        },
        { get: 0, put: 3 },
        "three renewals, three updates and no reads",
      );
      assert.equal(new Set(renewTimes).size, 4, "each renewal moved renewTime");

      // Someone marks the Lease (a write the holder did not make): the next renewal meets a 409,
      // reads, finds it still its own, and renews it, keeping the mark.
      const marked = await leaseOf(ns, name);
      await other.replace({
        ...marked,
        metadata: { ...marked.metadata, annotations: { "syncward.dev/repository": "acme/shop" } },
      });
      assert.equal(await a.renew(), true, "still ours after someone else's write");
      const kept = await leaseOf(ns, name);
      assert.equal(kept.spec.holderIdentity, "replica-a");
      assert.equal(kept.metadata.annotations?.["syncward.dev/repository"], "acme/shop", "the mark kept");
      assert.equal(a.held, true);

      // Another replica takes it once it has gone unrenewed: the renewal finds it gone, not ours.
      const b = new LeaseLock(other, ns, name, "replica-b", { leaseDurationSeconds: 2 });
      await eventually("replica-b takes the unrenewed lease", () => b.tryAcquire(), 10_000);
      assert.equal(await a.renew(), false, "lost to replica-b");
      assert.equal(a.held, false);
      assert.equal((await leaseOf(ns, name)).spec.holderIdentity, "replica-b");
    } finally {
      own.close();
    }
  });

  it("start keeps the lease; stop releases it", async () => {
    const ns = await cluster.stateNamespace("lease");
    const [a, b] = pair(ns);
    assert.equal(await a.tryAcquire(), true);
    let lost = false;
    a.start(() => {
      lost = true;
    });
    assert.equal(await b.tryAcquire(), false);
    await sleep(4_500); // more than two lease durations
    assert.equal(await b.tryAcquire(), false, "background renewals keep the lease");
    assert.equal(a.held, true);
    assert.equal(lost, false);
    await a.stop();
    assert.equal(a.held, false);
    assert.equal(await b.tryAcquire(), true);
    assert.equal(lost, false, "stopping is not losing");
  });

  it("onLost fires when another holder takes the lease", async () => {
    const ns = await cluster.stateNamespace("lease");
    const [a] = pair(ns);
    assert.equal(await a.tryAcquire(), true);
    let lostCalls = 0;
    const lostAt = new Promise<void>((resolve) =>
      a.start(() => {
        lostCalls++;
        resolve();
      }),
    );
    // Someone (a replica with a skewed clock, an operator) overwrites the holder.
    const lease = await leaseOf(ns, a.name);
    const now = microTime();
    await other.replace({
      ...lease,
      spec: { ...lease.spec, holderIdentity: "intruder", acquireTime: now, renewTime: now },
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("onLost was not called within 5s")), 5_000);
    });
    await Promise.race([lostAt, timeout]).finally(() => clearTimeout(timer));
    assert.equal(a.held, false);
    await sleep(1_500); // a renewal period or two: no second call, no renewing over the intruder
    assert.equal(lostCalls, 1);
    assert.equal((await leaseOf(ns, a.name)).spec.holderIdentity, "intruder");
    await a.stop(); // nothing to release: the lease is not ours
    assert.equal((await leaseOf(ns, a.name)).spec.holderIdentity, "intruder");
  });

  it("of many replicas racing for a free lease, exactly one wins", async () => {
    const ns = await cluster.stateNamespace("lease");
    const name = "syncward-leader";
    const locks = Array.from(
      { length: 8 },
      (_, i) =>
        new LeaseLock(i % 2 ? other : cluster.syncwardClient, ns, name, `replica-${i}`, {
          leaseDurationSeconds: 2,
        }),
    );
    const won = await Promise.all(locks.map((l) => l.tryAcquire()));
    assert.equal(won.filter(Boolean).length, 1);
    const winner = locks[won.indexOf(true)]!;
    assert.equal((await leaseOf(ns, name)).spec.holderIdentity, winner.identity);

    // Released, the others race again: still exactly one winner.
    await winner.release();
    const rest = locks.filter((l) => l !== winner);
    const again = await Promise.all(rest.map((l) => l.tryAcquire()));
    assert.equal(again.filter(Boolean).length, 1);
  });

  it("defaults to a 15 s lease renewed every 5 s", async () => {
    const ns = await cluster.stateNamespace("lease");
    const lock = new LeaseLock(cluster.syncwardClient, ns, leaseNameFor("shop.dev"), "replica-a");
    assert.equal(lock.leaseDurationSeconds, 15);
    assert.equal(lock.renewEveryMs, 5_000);
    assert.equal(await lock.tryAcquire(), true);
    await lock.stop();
  });
});
