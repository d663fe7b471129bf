// Pushes and ownership across replicas, against the real API server: a push delivered to a replica
// without the app's lease reaches the one with it through the state ConfigMap and is synced as that
// push; a push handed over while the holder lay dead is synced by the replica that takes the app;
// a replica cut off from the API server stops acting once its lease lapses, another takes over,
// and when the partition heals the two never act at once.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pino from "pino";
import { KubeClient } from "../../src/kube/client.ts";
import { instanceName } from "../../src/reconciler/environment-controller.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { LeaseLock, leaseNameFor } from "../../src/state/lease.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { cuttableProxy } from "../support/cuttable-proxy.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const scratch = mkdtempSync(join(tmpdir(), "syncward-shard-"));
const closing: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closing.reverse()) await close();
});

const cm = (data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${data}"}\n`;

const dataOf = async (ns: string) =>
  (
    (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as
      | { data?: { v: string } }
      | undefined
  )?.data?.v;

/**
 * Like GitHub's source, the head is remembered (here: until a push says otherwise), so a replica
 * that is not told of a push would not see it: only the handed-over record can bring it.
 */
class RememberingSource extends LocalGitSource {
  private readonly heads = new Map<string, string>();
  /** Counts pushes learned, so a git read that was under way when one arrived cannot undo it. */
  private learned = 0;
  override async head(branch: string): Promise<string> {
    const known = this.heads.get(branch);
    if (known) return known;
    const before = this.learned;
    const sha = await super.head(branch);
    // A push learned while git was being read is newer than what git said: it stays.
    if (this.learned === before) this.heads.set(branch, sha);
    return sha;
  }
  learnHead(branch: string, sha: string): void {
    this.learned++;
    this.heads.set(branch, sha);
  }
  forgetHeads(): void {
    this.learned++;
    this.heads.clear();
  }
}

function replica(
  identity: string,
  t: { ns: string; stateNs: string; repo: TestRepo },
  options: { client?: KubeClient; leaseDurationSeconds?: number } = {},
): Reconciler {
  const r = new Reconciler({
    app: "shard",
    config: {
      environments: [envConfig(t.ns, { source: { path: "app" }, syncPolicy: { automated: {} } })],
    } as never,
    client: options.client ?? cluster.syncwardClient,
    source: new RememberingSource(t.repo.dir, join(scratch, identity)),
    emit: () => {},
    log: pino({ level: "silent" }),
    stateNamespace: t.stateNs,
    identity,
    leases: true,
    leaseDurationSeconds: options.leaseDurationSeconds ?? 3,
    watch: true,
    pollIntervalMs: 0,
  });
  closing.push(() => r.stop());
  return r;
}

/**
 * Waits for `replica` to take the app over and its first passes to end; asserts what is deployed
 * is still `data` (nothing went back) and returns the state.
 */
async function takenOverAt(replica: Reconciler, ns: string, data: string) {
  await eventually(
    "the other replica to take the app over",
    async () => replica.active.includes("dev"),
    30_000,
  );
  await new Promise((r) => setTimeout(r, 1000));
  await replica.controller("dev").idle();
  assert.equal(await dataOf(ns), data, "the deployed commit stays the newest");
  return replica.store.load(instanceName("shard", "dev"));
}

async function setup(name: string) {
  const ns = await cluster.namespace(name);
  const stateNs = await cluster.stateNamespace(`${name}-state`);
  const repo = makeRepo({ "app/cm.yaml": cm("1") });
  return { ns, stateNs, repo };
}

/** The holder (replica-1), once it has synced the app. */
async function startHolder(t: { ns: string; stateNs: string; repo: TestRepo }): Promise<Reconciler> {
  const holder = replica("replica-1", t);
  holder.start();
  await eventually("replica-1 to hold the app and sync it", async () => (await dataOf(t.ns)) === "1");
  return holder;
}

/** A fresh app with its holder (replica-1) and a replica standing by (replica-2). */
async function holderAndStandby(name: string) {
  const t = await setup(name);
  const holder = await startHolder(t);
  const other = replica("replica-2", t);
  other.start();
  await eventually("replica-2 to stand by", async () => other.following);
  return { t, holder, other };
}

describe("replicas handing pushes and apps to each other", () => {
  it("a push delivered to the replica without the lease is synced by the one with it, as that push", async () => {
    const { t, holder, other } = await holderAndStandby("push-any");
    // The holder's own passes (the watch's echo of its first apply) are over: the push's pass
    // is not folded into one of them.
    await new Promise((r) => setTimeout(r, 1000));
    await holder.controller("dev").idle();

    const pushed = t.repo.commit({ "app/cm.yaml": cm("2") });
    // No polling anywhere, and the holder remembers the old head: only the hand-over can bring it.
    assert.deepEqual(other.nudgeBranch("main", "push", "alice", undefined, { revision: pushed }), ["dev"]);
    await eventually("the holder to sync the pushed commit", async () => (await dataOf(t.ns)) === "2");
    const state = await eventually("the sync in history", async () => {
      const s = await holder.store.load(instanceName("shard", "dev"));
      return s.lastSyncedRevision === pushed ? s : undefined;
    });
    const last = state.history.at(-1);
    assert.equal(last?.trigger, "push");
    assert.equal(last?.actor, "alice");
    assert.deepEqual(other.active, [], "the replica that received the push wrote nothing");
  });

  it("a push handed over while the holder lay dead is synced by the replica that takes the app over", async () => {
    const t = await setup("push-dead");
    // A holder that died without releasing: its lease runs out after 3 s.
    const dead = new LeaseLock(cluster.syncwardClient, t.stateNs, leaseNameFor("shard.app"), "replica-dead", {
      leaseDurationSeconds: 3,
    });
    assert.equal(await dead.tryAcquire(), true);
    const survivor = replica("replica-2", t);
    survivor.start();
    await eventually("the survivor to stand by", async () => survivor.following);
    const pushed = t.repo.commit({ "app/cm.yaml": cm("2") });
    survivor.nudgeBranch("main", "merge", "bob", undefined, { revision: pushed });
    await eventually(
      "the push recorded for the next holder",
      async () =>
        (await survivor.store.load(instanceName("shard", "dev"))).handedOverPush?.revision === pushed,
    );
    await eventually(
      "the survivor to take the app over",
      async () => survivor.active.includes("dev"),
      30_000,
    );
    await eventually("the pushed commit deployed", async () => (await dataOf(t.ns)) === "2");
    const state = await eventually("recorded", async () => {
      const s = await survivor.store.load(instanceName("shard", "dev"));
      return s.lastSyncedRevision === pushed ? s : undefined;
    });
    assert.deepEqual(
      state.history.map((h) => [h.revision, h.trigger, h.actor]),
      [[pushed, "merge", "bob"]],
      "one sync, attributed to the push",
    );
  });

  it("a replica taking the app over does not go back to a commit it handed over that the holder deployed and moved past", async () => {
    const { t, holder, other } = await holderAndStandby("push-past");
    const instance = instanceName("shard", "dev");
    const synced = (sha: string) =>
      eventually(`${sha.slice(0, 7)} synced`, async () => {
        const s = await holder.store.load(instance);
        return s.lastSyncedRevision === sha ? s : undefined;
      });

    // A push reaches replica-2, which hands it over (and learns where the branch is); the holder syncs it.
    const second = t.repo.commit({ "app/cm.yaml": cm("2") });
    other.nudgeBranch("main", "push", "alice", undefined, { revision: second });
    const afterSecond = await synced(second);
    assert.equal(afterSecond.handedOverPush, undefined, "the sync consumed the handed-over push");
    // The next push reaches the holder itself.
    const third = t.repo.commit({ "app/cm.yaml": cm("3") });
    holder.nudgeBranch("main", "push", "bob", undefined, { revision: third });
    await synced(third);

    // A rolling update replaces the holder: replica-2 takes the app over.
    await holder.stop();
    const state = await takenOverAt(other, t.ns, "3");
    assert.deepEqual(
      state.history.map((h) => h.revision),
      [state.history[0]?.revision, second, third],
      "no sync after the newest",
    );
  });

  // The record of a push of the second commit, left by a replica that received it, when the holder
  // had already deployed the third. Handed over before the third's sync started, it is superseded
  // by that sync; handed over after (a late webhook), nothing in history says so, as after a sync
  // killed midway or a release held for approval: the new holder still asks where the branch is.
  for (const late of [false, true]) {
    it(`a replica taking the app over never deploys an older commit a handed-over push named (${late ? "recorded after the newer sync" : "superseded by a later sync"})`, async () => {
      const t = await setup(late ? "push-late" : "push-superseded");
      const holder = await startHolder(t);
      const instance = instanceName("shard", "dev");
      const second = t.repo.commit({ "app/cm.yaml": cm("2") });
      let handedAt = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 50));
      const third = t.repo.commit({ "app/cm.yaml": cm("3") });
      holder.nudgeBranch("main", "push", "bob", undefined, { revision: third });
      await eventually("the newest commit deployed", async () => (await dataOf(t.ns)) === "3");
      await holder.stop();
      if (late) handedAt = new Date().toISOString();
      await holder.store.update(instance, (s) => {
        s.handedOverPush = {
          branch: "main",
          trigger: "push",
          actor: "alice",
          at: handedAt,
          revision: second,
        };
      });

      const next = replica("replica-2", t);
      next.start();
      await takenOverAt(next, t.ns, "3");
      // Any later write of the state (a freeze from the CLI, here) brings the record to the new
      // holder's watch again: still not a push to deploy.
      await next.store.update(instance, (s) => {
        s.freeze = { by: "carol", at: new Date().toISOString(), reason: "a change freeze" };
      });
      await next.store.update(instance, (s) => {
        s.freeze = undefined;
      });
      const state = await takenOverAt(next, t.ns, "3");
      assert.deepEqual(
        state.history.filter((h) => h.revision === second),
        [],
        "the older commit was never synced",
      );
    });
  }

  it("a replica cut off from the API server stops at its lease's end; another takes over; healed, they never act at once", async () => {
    const t = await setup("partition");
    const proxy = await cuttableProxy(
      cluster.syncwardKubeconfig,
      cluster.syncwardClient.server.origin,
      scratch,
    );
    closing.push(() => proxy.close());
    const cutClient = KubeClient.fromKubeconfig({ kubeconfig: proxy.kubeconfig, timeoutMs: 2000 });
    closing.push(async () => cutClient.close());
    const isolated = replica("replica-1", t, { client: cutClient });
    isolated.start();
    await eventually("replica-1 to hold the app and sync it", async () => (await dataOf(t.ns)) === "1");
    const other = replica("replica-2", t);
    other.start();
    await eventually("replica-2 to stand by", async () => other.following);

    await proxy.cut();
    await eventually(
      "replica-1 to stop acting once it cannot renew",
      async () => isolated.active.length === 0,
      30_000,
    );
    await eventually("replica-2 to take the app over", async () => other.active.includes("dev"), 30_000);
    const second = t.repo.commit({ "app/cm.yaml": cm("2") });
    other.nudgeBranch("main", "push", "carol", undefined, { revision: second });
    await eventually("replica-2 to sync the next commit", async () => (await dataOf(t.ns)) === "2");

    await proxy.restore();
    // Back in touch: replica-1 sees replica-2 holding the app (its share of one app is one, and
    // replica-2's lease is live), so it stays out; replica-2 keeps the app.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(
        !(isolated.active.length > 0 && other.active.length > 0),
        "two replicas acting on one app at once",
      );
    }
    assert.deepEqual(other.active, ["dev"]);
    assert.equal(isolated.following, true);
  });
});
