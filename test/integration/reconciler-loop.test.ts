// The loop's policy: manual waits, automated syncs each revision once, failures are retried
// then marked stuck, a newer commit supersedes, bursts coalesce, polls find new commits, and
// sync windows hold automated syncs.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import type { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import { EnvironmentController, instanceName } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource, type RevisionSource } from "../../src/reconciler/revision-source.ts";
import { LeaseLock, leaseNameFor } from "../../src/state/lease.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${data}"}\n`;
// An object the API server rejects (422): a Service port out of range.
const invalidService =
  "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 70000}]}\n";

async function setup(
  fields: Record<string, unknown>,
  files: Record<string, string>,
  pollIntervalMs = 0,
  wrap: (source: RevisionSource) => RevisionSource = (source) => source,
  storeOf: (client: KubeClient, ns: string) => StateStore = (client, ns) => new StateStore(client, ns),
) {
  const ns = await cluster.namespace("loop");
  const stateNs = await cluster.stateNamespace("loop-state");
  const repo = makeRepo(files);
  const events: ReconcilerEvent[] = [];
  const store = storeOf(cluster.syncwardClient, stateNs);
  const controller = new EnvironmentController({
    app: "loop",
    env: envConfig(ns, { source: { path: "app" }, ...fields }),
    client: cluster.syncwardClient,
    store,
    source: wrap(new LocalGitSource(repo.dir, cache)),
    emit: (e) => events.push(e),
    log: pino({ level: "silent" }),
    pollIntervalMs,
    watch: false,
  });
  return { ns, repo, events, store, controller };
}

const dataOf = async (ns: string) =>
  (
    (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as
      | { data?: { v: string } }
      | undefined
  )?.data?.v;

describe("reconcile loop", () => {
  it("with no automated policy, flags OutOfSync and waits for a manual sync", async () => {
    const { ns, events, store, controller } = await setup({}, { "app/cm.yaml": cm("1") });
    controller.start();
    try {
      await eventually("OutOfSync reported", async () => events.find((e) => e.type === "outOfSync"));
      await controller.idle();
      assert.equal(await dataOf(ns), undefined, "nothing applied");
      assert.equal((await store.load(controller.instance)).syncStatus, "OutOfSync");
      const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(outcome.phase, "Succeeded");
      assert.equal(await dataOf(ns), "1");
      const state = await store.load(controller.instance);
      assert.equal(state.history.at(-1)?.trigger, "cli");
      assert.equal(state.history.at(-1)?.actor, "alice");
    } finally {
      await controller.stop();
    }
  });

  it("retries a revision the API server rejects (a 422, as Argo CD retries any failure), then marks it stuck, and a fix supersedes it", async () => {
    const { ns, repo, events, store, controller } = await setup(
      {
        syncPolicy: {
          automated: { prune: true },
          retry: { limit: 3, backoff: { duration: "1s", factor: 2, maxDuration: "2s" } },
        },
      },
      { "app/cm.yaml": cm("1"), "app/svc.yaml": invalidService },
    );
    controller.start();
    try {
      const stuck = await eventually("stuck", async () => events.find((e) => e.type === "stuck"));
      assert.equal(stuck.type, "stuck");
      if (stuck.type === "stuck")
        assert.match(stuck.reason, /service\/bad.*70000.*\(gave up after 4 attempts\)$/i);
      let state = await store.load(controller.instance);
      assert.equal(state.stuck?.revision, repo.head());
      assert.equal(state.history.length, 1, "one operation, its retries listed in it");
      assert.equal(state.history[0]?.result, "Failed");
      assert.deepEqual(
        state.history[0]?.retried?.map((r) => r.revision),
        [repo.head(), repo.head(), repo.head()],
        "each retry stayed on the operation's revision",
      );
      // The fix lands as a newer commit: it is synced, and the environment is no longer stuck.
      const fix = repo.commit({ "app/svc.yaml": null });
      controller.nudge("push", "bob");
      state = await eventually("fixed revision synced", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === fix ? s : undefined;
      });
      assert.equal(state.stuck, undefined);
      assert.equal(await dataOf(ns), "1");
    } finally {
      await controller.stop();
    }
  });

  it("retries transient failures (an admission webhook briefly down) with backoff, then succeeds", async () => {
    const { ns, store, controller } = await setup(
      {
        syncPolicy: {
          automated: {},
          retry: { limit: 5, backoff: { duration: "1s", factor: 1, maxDuration: "1s" } },
        },
      },
      { "app/cm.yaml": cm("1") },
    );
    const webhook = `syncward-test-${ns}`;
    // A validating webhook whose service does not exist: the API server answers 500 for every write in ns.
    await cluster.client.apply({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: webhook },
      webhooks: [
        {
          name: "down.syncward.test",
          clientConfig: { service: { name: "nowhere", namespace: ns, path: "/" } },
          rules: [
            {
              apiGroups: [""],
              apiVersions: ["v1"],
              operations: ["CREATE", "UPDATE"],
              resources: ["configmaps"],
            },
          ],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          timeoutSeconds: 1,
        },
      ],
    } as never);
    controller.start();
    try {
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(await dataOf(ns), undefined, "blocked while the webhook is down");
      await cluster.client.delete({
        group: "admissionregistration.k8s.io",
        kind: "ValidatingWebhookConfiguration",
        namespace: "",
        name: webhook,
        apiVersion: "admissionregistration.k8s.io/v1",
      });
      const state = await eventually(
        "synced after the webhook came back",
        async () => {
          const s = await store.load(controller.instance);
          return s.history.at(-1)?.result === "Succeeded" ? s : undefined;
        },
        20_000,
      );
      assert.equal(await dataOf(ns), "1");
      assert.equal(state.history.length, 1, "one operation in history, however many attempts");
      assert.equal(state.history[0]?.trigger, "retry", "the successful attempt was a retry");
    } finally {
      await cluster.client
        .delete({
          group: "admissionregistration.k8s.io",
          kind: "ValidatingWebhookConfiguration",
          namespace: "",
          name: webhook,
          apiVersion: "admissionregistration.k8s.io/v1",
        })
        .catch(() => undefined);
      await controller.stop();
    }
  });

  it("coalesces a burst of commits into syncs that end at the newest, never an older one after it", async () => {
    const { ns, repo, store, controller } = await setup(
      { syncPolicy: { automated: {} } },
      { "app/cm.yaml": cm("0") },
    );
    let last = "";
    for (let i = 1; i <= 5; i++) {
      last = repo.commit({ "app/cm.yaml": cm(String(i)) });
      controller.nudge("push", "alice");
    }
    await controller.idle();
    const state = await store.load(controller.instance);
    const syncs = state.history.filter((h) => h.result === "Succeeded");
    assert.ok(syncs.length <= 2, `${syncs.length} syncs for a burst of 5 commits`);
    assert.equal(syncs.at(-1)?.revision, last);
    assert.equal(await dataOf(ns), "5");
  });

  it("finds a new commit by polling the branch, without any webhook", async () => {
    const { ns, repo, store, controller } = await setup(
      { syncPolicy: { automated: {} } },
      { "app/cm.yaml": cm("a") },
      500,
    );
    controller.start();
    try {
      await eventually("first sync", async () => (await dataOf(ns)) === "a");
      const next = repo.commit({ "app/cm.yaml": cm("b") });
      // The state is written after the apply: wait for the record, not only the object.
      const state = await eventually(
        "polled, synced and recorded",
        async () => {
          const s = await store.load(controller.instance);
          return s.lastSyncedRevision === next ? s : undefined;
        },
        10_000,
      );
      assert.equal(state.history.at(-1)?.trigger, "poll");
      assert.equal(await dataOf(ns), "b");
    } finally {
      await controller.stop();
    }
  });

  it("holds an automated sync outside its sync window and says when the window opens", async () => {
    const now = new Date();
    const opens = new Date(now.getTime() + 2 * 3600_000);
    const schedule = `${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *`;
    const { ns, events, store, controller } = await setup(
      {
        syncPolicy: { automated: {} },
        syncWindows: [{ kind: "allow", schedule, duration: "1h", timeZone: "UTC" }],
      },
      { "app/cm.yaml": cm("1") },
    );
    controller.nudge("push", "alice");
    await controller.idle();
    const waiting = events.find((e) => e.type === "waiting");
    assert.ok(waiting && waiting.type === "waiting");
    assert.equal(waiting.until?.slice(0, 16), opens.toISOString().slice(0, 16));
    assert.equal(await dataOf(ns), undefined);
    assert.equal((await store.load(controller.instance)).syncStatus, "OutOfSync");
    const manual = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(manual.phase, "Refused");
    assert.match(manual.message, /sync window/);
    await controller.stop();
  });

  it("still previews (dry run) and takes explicit syncs after it stopped, as a replica does that lost its lease", async () => {
    const { ns, store, controller } = await setup({}, { "app/cm.yaml": cm("1") });
    controller.start();
    await controller.idle();
    await controller.stop();
    const preview = await controller.sync({ trigger: "comment", actor: "preview", dryRun: true });
    assert.equal(preview.phase, "Succeeded");
    assert.equal(preview.dryRun, true);
    assert.equal(await dataOf(ns), undefined, "a preview applies nothing");
    // Without a Reconciler's lease to defer to, the controller serves the one command (the CLI's case).
    const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(outcome.phase, "Succeeded");
    assert.equal(await dataOf(ns), "1");
    assert.equal((await store.load(controller.instance)).history.at(-1)?.actor, "alice");
  });

  it("on a replica without the lease: previews work; explicit syncs are handed over and pushes change nothing here", async () => {
    const ns = await cluster.namespace("standby");
    const stateNs = await cluster.stateNamespace("standby-state");
    const repo = makeRepo({ "app/cm.yaml": cm("1") });
    const config = {
      environments: [envConfig(ns, { source: { path: "app" }, syncPolicy: { automated: {} } })],
    };
    const other = new LeaseLock(
      cluster.syncwardClient,
      stateNs,
      leaseNameFor(instanceName("standby", "app")),
      "replica-2",
      { leaseDurationSeconds: 600 },
    );
    assert.equal(await other.tryAcquire(), true);
    const reconciler = new Reconciler({
      app: "standby",
      config,
      client: cluster.syncwardClient,
      source: new LocalGitSource(repo.dir, cache),
      emit: () => {},
      log: pino({ level: "silent" }),
      stateNamespace: stateNs,
      identity: "replica-1",
      leases: true,
      watch: false,
      pollIntervalMs: 0,
    });
    reconciler.start();
    try {
      await eventually("found the lease held by replica-2", async () => reconciler.following);
      const controller = reconciler.controller("dev");
      const preview = await controller.sync({ trigger: "comment", actor: "preview", dryRun: true });
      assert.equal(preview.phase, "Succeeded");
      const outcome = await controller.sync({ trigger: "comment", actor: "alice" });
      assert.equal(outcome.handedOver, true);
      assert.match(outcome.message, /handed to the replica that holds the lease of app standby/);
      assert.deepEqual(reconciler.nudgeBranch("main", "push", "alice"), ["dev"]);
      await controller.idle();
      assert.equal(await dataOf(ns), undefined, "the replica holding the lease does the syncing");
      const state = await reconciler.store.load(controller.instance);
      assert.deepEqual(state.history, []);
      assert.equal(state.handedOver?.revision, repo.head(), "the request waits for the lease holder");
      assert.equal(state.handedOver?.actor, "alice");
    } finally {
      await reconciler.stop();
      await other.release();
    }
  });

  it("a sync asked of the replica without the lease is run by the one that holds it, once", async () => {
    const ns = await cluster.namespace("handover");
    const stateNs = await cluster.stateNamespace("handover-state");
    const repo = makeRepo({ "app/cm.yaml": cm("1") });
    // Manual environment: only a person's sync writes, so whatever lands came through the handover.
    const config = { environments: [envConfig(ns, { source: { path: "app" } })] };
    const replica = (identity: string) =>
      new Reconciler({
        app: "handover",
        config,
        client: cluster.syncwardClient,
        source: new LocalGitSource(repo.dir, join(cache, identity)),
        emit: () => {},
        log: pino({ level: "silent" }),
        stateNamespace: stateNs,
        identity,
        leases: true,
        watch: true,
        pollIntervalMs: 0,
      });
    const leader = replica("replica-1");
    const standby = replica("replica-2");
    leader.start();
    try {
      await eventually("replica-1 to lead", async () => leader.active.includes("dev"));
      standby.start();
      await eventually("replica-2 to find the lease taken", async () => standby.following);

      const outcome = await standby.controller("dev").sync({ trigger: "comment", actor: "alice" });
      assert.equal(outcome.handedOver, true);
      await eventually("the leader to sync it", async () => (await dataOf(ns)) === "1");
      const state = await eventually("the handover to be done", async () => {
        const s = await leader.store.load(leader.controller("dev").instance);
        return s.handedOver === undefined && s.history.length === 1 ? s : undefined;
      });
      assert.equal(state.history[0]?.actor, "alice");
      assert.equal(state.history[0]?.trigger, "comment");
      assert.equal(state.history[0]?.revision, repo.head());
      assert.equal(state.lastSyncedRevision, repo.head());
    } finally {
      await standby.stop();
      await leader.stop();
    }
  });

  it("retries a sync whose source could not be fetched (GitHub down), without calling it a render failure or stuck", async () => {
    const { ns, events, store, controller } = await setup(
      { syncPolicy: { retry: { limit: 3, backoff: { duration: "1s", factor: 1, maxDuration: "1s" } } } },
      { "app/cm.yaml": cm("1") },
      0,
      treeFailing(2),
    );
    const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(outcome.phase, "Succeeded");
    assert.equal(await dataOf(ns), "1");
    const state = await store.load(controller.instance);
    assert.equal(state.stuck, undefined);
    assert.deepEqual(
      state.history.map((h) => h.result),
      ["Succeeded"],
    );
    const retried = state.history[0]?.retried ?? [];
    assert.equal(retried.length, 2);
    for (const r of retried) {
      assert.match(r.message, /^fetching [0-9a-f]{7} failed: GitHub did not serve the tarball \(502\)/);
      assert.doesNotMatch(r.message, /render failed/);
    }
    assert.equal(events.filter((e) => e.type === "stuck").length, 0);
  });

  it("keeps the first 3 and the last 10 attempts of a sync retried without limit, and counts the rest", async () => {
    const { store, controller } = await setup(
      { syncPolicy: { retry: { limit: -1, backoff: { duration: "10ms", factor: 1, maxDuration: "10ms" } } } },
      { "app/cm.yaml": cm("1") },
      0,
      treeFailing(20),
    );
    const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(outcome.phase, "Succeeded");
    const entry = (await store.load(controller.instance)).history.at(-1);
    assert.deepEqual(
      entry?.retried?.map((r) => r.attempt),
      [1, 2, 3, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    );
    assert.equal(entry?.retriedOmitted, 7);
  });

  it("retries an attempt whose state read is denied by an API server that has just started", async () => {
    let store: StartingUpStore | undefined;
    const { ns, controller } = await setup(
      { syncPolicy: { retry: { limit: 2, backoff: { duration: "10ms", factor: 1, maxDuration: "10ms" } } } },
      { "app/cm.yaml": cm("1") },
      0,
      // tree() is called once (the render is cached), inside the first attempt, right before it reads the state.
      before("tree", () => {
        if (store) store.armed = true;
      }),
      (client, stateNs) => {
        store = new StartingUpStore(client, stateNs);
        return store;
      },
    );
    const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(outcome.phase, "Succeeded", outcome.message);
    assert.equal(await dataOf(ns), "1");
    const retried = (await store?.load(controller.instance))?.history.at(-1)?.retried ?? [];
    assert.equal(retried.length, 1);
    assert.match(
      retried[0]?.message ?? "",
      /^reading the environment's state failed: forbidden: cannot get configmaps/,
    );
  });

  it("a dry run (a PR preview) neither waits behind a pass under way nor holds it up", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reading = false;
    const { ns, repo, controller } = await setup(
      { syncPolicy: { automated: {} } },
      { "app/cm.yaml": cm("1") },
      0,
      // The pass stops while it reads the branch, until released.
      (source) => ({
        description: source.description,
        resolve: (ref) => source.resolve(ref),
        tree: (sha) => source.tree(sha),
        head: async (branch) => {
          reading = true;
          await gate;
          return source.head(branch);
        },
      }),
    );
    controller.start();
    try {
      await eventually("the pass to read the branch", async () => reading);
      const preview = await controller.sync({
        trigger: "comment",
        actor: "preview",
        revision: repo.head(),
        dryRun: true,
      });
      assert.equal(preview.phase, "Succeeded", preview.message);
      assert.equal(preview.dryRun, true);
      assert.equal(preview.writes, 0);
      assert.equal(await dataOf(ns), undefined, "the pass is still held; the preview applied nothing");
      release();
      await eventually("the pass to sync", async () => (await dataOf(ns)) === "1");
    } finally {
      release();
      await controller.stop();
    }
  });

  it("a pass that was under way when the controller stopped (lease lost) does not go on to sync", async () => {
    let stopping: Promise<void> | undefined;
    const { ns, store, controller } = await setup(
      { syncPolicy: { automated: {} } },
      { "app/cm.yaml": cm("1") },
      0,
      // The lease is lost while the pass reads the branch.
      before("head", () => {
        stopping ??= controller.stop();
      }),
    );
    controller.start();
    await eventually("the pass to read the branch", async () => stopping !== undefined);
    await stopping;
    assert.equal(await dataOf(ns), undefined, "nothing applied after the stop");
    assert.deepEqual((await store.load(controller.instance)).history, []);
  });
});

/**
 * A store whose next read, once armed, is denied the way a just-started API server denies
 * requests before its RBAC informers have synced.
 */
class StartingUpStore extends StateStore {
  armed = false;
  override async load(instance: string) {
    if (this.armed) {
      this.armed = false;
      throw new KubeApiError(
        `configmaps "x" is forbidden: User "system:serviceaccount:syncward:syncward" cannot get resource "configmaps" in API group "" in the namespace "${this.namespace}"`,
        403,
        "Forbidden",
        "GET",
        "/api/v1/configmaps",
      );
    }
    return super.load(instance);
  }
}

/** The source, with `hook` run before each call of `method` (it may throw instead). */
function before(method: "head" | "tree", hook: () => void): (source: RevisionSource) => RevisionSource {
  return (source) => ({
    description: source.description,
    resolve: (ref) => source.resolve(ref),
    head: async (branch) => {
      if (method === "head") hook();
      return source.head(branch);
    },
    tree: async (sha) => {
      if (method === "tree") hook();
      return source.tree(sha);
    },
  });
}

/** The source, except that fetching a tree fails the first `outages` times (GitHub down). */
function treeFailing(outages: number): (source: RevisionSource) => RevisionSource {
  return before("tree", () => {
    if (outages-- > 0) throw new Error("GitHub did not serve the tarball (502)");
  });
}
