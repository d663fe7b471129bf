// Faults of the control plane itself, on a private plane (etcd and kube-apiserver of this file's
// own, which it stops and starts; the shared plane is never touched): the API server or etcd
// dies in the middle of a sync, or syncward's watch connection drops while someone edits a
// managed object. Each time syncward converges, and never reports success for what failed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { EnvironmentController, type Logger } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import type { HistoryEntry } from "../../src/state/types.ts";
import { eventually } from "../support/cluster.ts";
import { cuttableProxy } from "../support/cuttable-proxy.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";
import { usePrivatePlane } from "../support/private-plane.ts";

const plane = usePrivatePlane();
const scratch = mkdtempSync(join(tmpdir(), "syncward-faults-"));
const clients: KubeClient[] = [];
after(() => {
  for (const c of clients) c.close();
});

// Short waits so a fault costs seconds, not minutes: requests time out after 5s (an API server
// without etcd holds them open), retries start at 500ms and never wait more than 2s.
const FAST_RETRY = { limit: 30, backoff: { duration: "500ms", factor: 2, maxDuration: "2s" } };

interface Captured {
  log: Logger;
  messages: string[];
}

function captureLog(): Captured {
  const messages: string[] = [];
  const line = (_obj: object, msg?: string) => {
    messages.push(msg ?? "");
  };
  return { log: { info: line, warn: line, error: line, debug: line }, messages };
}

/** Two waves of ConfigMaps: wave 1 is applied only after wave 0 was read back. */
function configMaps(tag: string): string {
  return ["0", "1"]
    .flatMap((wave) =>
      Array.from(
        { length: 10 },
        (_, i) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-${wave}-${i}
  annotations: {argocd.argoproj.io/sync-wave: "${wave}"}
data: {tag: "${tag}"}
`,
      ),
    )
    .join("---\n");
}

async function setup(
  name: string,
  fields: Record<string, unknown>,
  options: { kubeconfig?: string; onEvent?: (e: ReconcilerEvent) => void } = {},
) {
  const ns = await plane.namespace(name);
  const stateNs = await plane.stateNamespace(`${name}-state`);
  const repo = makeRepo({ "app/cms.yaml": configMaps("one") });
  const client = KubeClient.fromKubeconfig({
    kubeconfig: options.kubeconfig ?? plane.syncwardKubeconfig,
    timeoutMs: 5_000,
  });
  clients.push(client);
  const store = new StateStore(client, stateNs);
  const events: ReconcilerEvent[] = [];
  const captured = captureLog();
  const controller = new EnvironmentController({
    app: "faults",
    env: envConfig(ns, { source: { path: "app" }, ...fields }),
    client,
    store,
    source: new LocalGitSource(repo.dir, join(scratch, name)),
    emit: (e) => {
      events.push(e);
      options.onEvent?.(e);
    },
    log: captured.log,
    pollIntervalMs: 0,
  });
  return { ns, stateNs, repo, client, store, events, controller, ...captured };
}

/** Every one of the 20 ConfigMaps exists and carries `tag`. */
async function allTagged(ns: string, tag: string): Promise<boolean> {
  const found = await tags(ns);
  return found.length === 20 && found.every((t) => t === tag);
}

async function tags(ns: string): Promise<string[]> {
  const list = await plane.client.list("v1", "ConfigMap", { namespace: ns });
  return list.items
    .filter((c) => c.metadata.name.startsWith("cm-"))
    .map((c) => (c as unknown as { data: { tag: string } }).data.tag);
}

/**
 * History of a sync that failed and was retried: one operation, the success, carrying each failed
 * attempt as a failure that names the cause, before the attempt that succeeded.
 */
function assertRetriedThenSucceeded(history: HistoryEntry[], revision: string, cause: RegExp): void {
  assert.equal(
    history.length,
    1,
    `one operation, however many attempts:\n${JSON.stringify(history, null, 2)}`,
  );
  const [entry] = history;
  assert.equal(entry?.result, "Succeeded");
  assert.equal(entry?.trigger, "retry");
  assert.equal(entry?.revision, revision);
  const retried = entry?.retried ?? [];
  assert.ok(retried.length >= 1, "the failed attempts are recorded");
  assert.deepEqual(
    retried.map((a) => a.attempt),
    retried.map((_, i) => i + 1),
  );
  for (const a of retried) assert.match(a.message, /\(retrying in \d+(ms|s)\)$/);
  assert.match(retried[0]?.message ?? "", cause);
  assert.ok(
    (retried.at(-1)?.finishedAt ?? "") <= (entry?.startedAt ?? ""),
    "failures came before the success",
  );
}

describe("faults of the control plane", () => {
  it("retries a sync whose API server died after the first object, and converges once it is back", async () => {
    const t = await setup("apiserver", { syncPolicy: { retry: FAST_RETRY } });
    let stopping: Promise<void> | undefined;
    const syncing = t.controller.sync({
      trigger: "cli",
      actor: "tester",
      onProgress: (e) => {
        // Killed synchronously on the first applied object: the rest of wave 0 is in flight.
        if (e.type === "applied" && !stopping) stopping = plane.stop("kube-apiserver");
      },
    });
    await eventually("a failed attempt", async () => t.messages.includes("sync failed; retrying"), 60_000);
    assert.ok(stopping, "the API server was stopped mid-sync");
    await stopping;
    assert.equal(
      t.events.filter((e) => e.type === "synced").length,
      0,
      "nothing is reported while the API server is down",
    );
    await plane.start("kube-apiserver");

    const outcome = await syncing;
    assert.equal(outcome.phase, "Succeeded", outcome.message);
    assert.deepEqual(await tags(t.ns), Array(20).fill("one"));
    const state = await t.store.load(t.controller.instance);
    assertRetriedThenSucceeded(state.history, t.repo.head(), /cannot reach the API server/);
    assert.equal(state.lastSyncedRevision, t.repo.head());
    assert.equal(state.syncStatus, "Synced");
    assert.equal(state.stuck, undefined);
    const synced = t.events.filter((e) => e.type === "synced");
    assert.deepEqual(
      synced.map((e) => e.outcome.phase),
      ["Succeeded"],
      "one report, after the API server came back",
    );
  });

  it("retries an automated sync whose etcd died before the first write, and converges once it is back", async () => {
    let stopping: Promise<void> | undefined;
    const t = await setup(
      "etcd",
      { syncPolicy: { automated: { prune: true, selfHeal: true }, retry: FAST_RETRY } },
      {
        // syncStarted is emitted after planning, right before the first write.
        onEvent: (e) => {
          if (e.type === "syncStarted" && !stopping) stopping = plane.stop("etcd");
        },
      },
    );
    const events = t.events;
    t.controller.start();
    try {
      await eventually("a failed attempt", async () => t.messages.includes("sync failed; retrying"), 60_000);
      assert.ok(stopping, "etcd was stopped mid-sync");
      await stopping;
      assert.equal(events.filter((e) => e.type === "synced").length, 0);
      await plane.start("etcd");

      const synced = await eventually(
        "the sync to finish",
        async () => events.find((e) => e.type === "synced"),
        120_000,
      );
      assert.equal(synced.outcome.phase, "Succeeded", synced.outcome.message);
      assert.deepEqual(await tags(t.ns), Array(20).fill("one"));
      const state = await t.store.load(t.controller.instance);
      assertRetriedThenSucceeded(state.history, t.repo.head(), /cannot reach the API server|timed out|etcd/);
      assert.equal(state.syncStatus, "Synced");
      assert.equal(events.filter((e) => e.type === "stuck").length, 0);
    } finally {
      await t.controller.stop();
    }
  });

  it("resumes the whole loop (lease, polls, watches) after an API server outage longer than its lease", async () => {
    const t = await startReconciler("outage", FAST_RETRY);
    try {
      await eventually("the first revision", () => allTagged(t.ns, "one"), 60_000);
      await plane.stop("kube-apiserver");
      const second = t.repo.commit({ "app/cms.yaml": configMaps("two") });
      await eventually("the lease to be lost", async () => t.messages.includes(LEASE_LOST), 60_000);
      assert.deepEqual(t.reconciler.active, [], "no environment acts without the lease");
      await plane.start("kube-apiserver");

      await eventually("the revision committed during the outage", () => allTagged(t.ns, "two"), 90_000);
      // Under load the 3s lease may be lost and taken back more than once: what matters is that it
      // was taken back after the outage, and the revision synced below.
      const acquired = t.messages.flatMap((m, i) => (m === LEASE_ACQUIRED ? [i] : []));
      assert.ok(acquired.length >= 2, `lease acquired ${acquired.length} time(s)`);
      assert.ok((acquired.at(-1) ?? -1) > t.messages.indexOf(LEASE_LOST), "acquired again after the loss");
      // The state is written once the apply is done: waited for, not read the moment the objects change.
      const state = await eventually("the sync recorded", async () => {
        const s = await t.state();
        return s.lastSyncedRevision === second ? s : undefined;
      });
      assert.deepEqual(
        state.history.filter((h) => h.revision === second).map((h) => h.result),
        ["Succeeded"],
      );
    } finally {
      await t.reconciler.stop();
    }
  });

  it("abandons a sync that is waiting to retry when it loses its lease, and syncs afresh once it holds it again", async () => {
    let stopping: Promise<void> | undefined;
    let second = "";
    // Retries a minute apart: the lease (3s) is lost long before the first retry would run.
    const t = await startReconciler(
      "abandon",
      { limit: 5, backoff: { duration: "1m", factor: 2, maxDuration: "3m" } },
      (e) => {
        if (e.type === "syncStarted" && e.revision === second && !stopping)
          stopping = plane.stop("kube-apiserver");
      },
    );
    try {
      await eventually("the first revision", () => allTagged(t.ns, "one"), 60_000);
      second = t.repo.commit({ "app/cms.yaml": configMaps("two") });
      await eventually("a failed attempt", async () => t.messages.includes("sync failed; retrying"), 60_000);
      await eventually("the lease to be lost", async () => t.messages.includes(LEASE_LOST), 60_000);
      assert.deepEqual(t.reconciler.active, []);
      await stopping;
      await plane.start("kube-apiserver");

      // Wait for the new holder's record, not the objects: the abandoned attempt may have applied
      // them before the API server went down (it stops gracefully, finishing requests in flight).
      const state = await eventually(
        "the second revision recorded",
        async () => {
          const s = await t.state();
          return s.lastSyncedRevision === second ? s : undefined;
        },
        90_000,
      );
      assert.equal(await allTagged(t.ns, "two"), true);
      const entries = state.history.filter((h) => h.revision === second);
      // The abandoned attempt wrote nothing (the lease was no longer ours); the new holder's
      // sync is a fresh one, not a retry of it.
      assert.deepEqual(
        entries.map((h) => [h.trigger, h.result]),
        [["poll", "Succeeded"]],
      );
    } finally {
      await t.reconciler.stop();
    }
  });

  it("heals drift made while its watch connection was cut, resuming the watch where it stopped", async () => {
    const { t, heal } = await healAcrossCut("watch", async () => {});
    assert.equal(heal.result, "Succeeded");
    assert.deepEqual(heal.drifted, [`/ConfigMap:${t.ns}/cm-1-3 /data/tag`]);
    assert.ok(!t.messages.includes("watch expired (410); re-listing"), "resumed, not re-listed");
  });

  it("heals drift made while its watch was down and the API server restarted, re-listing on 410", async () => {
    const { t, heal } = await healAcrossCut(
      "relist",
      async () => {
        // A restarted API server's watch cache starts after the edit: syncward's resourceVersion is
        // too old to resume from (410 Gone).
        await plane.stop("kube-apiserver");
        await plane.start("kube-apiserver");
      },
      "watch expired (410); re-listing",
    );
    assert.equal(heal.result, "Succeeded");
    assert.deepEqual(heal.drifted, [`/ConfigMap:${t.ns}/cm-1-3 /data/tag`]);
    assert.ok(t.messages.includes("watch expired (410); re-listing"));
  });
});

const LEASE_LOST = "lease lost; stopped reconciling";
const LEASE_ACQUIRED = "lease acquired; reconciling";

/** The whole reconciler, as the controller process runs it: a 3s lease, polls every second, watches. */
async function startReconciler(
  name: string,
  retry: unknown,
  onEvent: (e: ReconcilerEvent) => void = () => {},
) {
  const ns = await plane.namespace(name);
  const stateNs = await plane.stateNamespace(`${name}-state`);
  const repo = makeRepo({ "app/cms.yaml": configMaps("one") });
  const client = KubeClient.fromKubeconfig({ kubeconfig: plane.syncwardKubeconfig, timeoutMs: 5_000 });
  clients.push(client);
  const { log, messages } = captureLog();
  const config = parseConfig(
    stringify({
      environments: [
        {
          name: "dev",
          source: { path: "app" },
          destination: { namespace: ns },
          syncPolicy: { automated: { prune: true, selfHeal: true }, retry },
        },
      ],
    }),
  );
  const reconciler = new Reconciler({
    app: name,
    config,
    client,
    source: new LocalGitSource(repo.dir, join(scratch, name)),
    emit: onEvent,
    log,
    stateNamespace: stateNs,
    identity: "replica-1",
    leases: true,
    leaseDurationSeconds: 3,
    pollIntervalMs: 1_000,
  });
  reconciler.start();
  const state = () => reconciler.store.load(reconciler.controller("dev").instance);
  return { ns, repo, reconciler, messages, state };
}

/**
 * Syncs an environment (self-heal on, no polling: only its watch can notice drift) through a
 * proxy, cuts the proxy, edits a managed object, runs `meanwhile`, restores the proxy and waits
 * for the edit to be healed. Returns the self-heal's history entry.
 */
async function healAcrossCut(name: string, meanwhile: () => Promise<void>, logged?: string) {
  const proxy = await cuttableProxy(plane.syncwardKubeconfig, plane.server, scratch);
  after(() => proxy.close());
  const t = await setup(
    name,
    { syncPolicy: { automated: { prune: true, selfHeal: true }, retry: FAST_RETRY } },
    { kubeconfig: proxy.kubeconfig },
  );
  t.controller.start();
  try {
    await eventually("the first sync", async () => t.events.some((e) => e.type === "synced"));
    // The watch has listed (its resourceVersion predates the edit below) once it asked to watch.
    await eventually("the watch to start", async () => (t.client.counts.byVerb.WATCH ?? 0) > 0);
    await t.controller.idle();

    await proxy.cut();
    editByHand(t.ns);
    await meanwhile();
    await proxy.restore();

    await eventually("the edit healed", () => allTagged(t.ns, "one"), 90_000);
    const heal = await eventually("a self-heal in history", async () =>
      (await t.store.load(t.controller.instance)).history.find((h) => h.trigger === "selfHeal"),
    );
    // The pass the cluster's return brings may heal before the watch is back: wait for the watch.
    if (logged) await eventually(`"${logged}" in the log`, async () => t.messages.includes(logged), 30_000);
    return { t, heal };
  } finally {
    await t.controller.stop();
  }
}

/** Someone edits a managed object with kubectl, straight to the API server (not through the proxy). */
function editByHand(ns: string): void {
  execFileSync("kubectl", [
    "--kubeconfig",
    plane.kubeconfig,
    "-n",
    ns,
    "patch",
    "configmap",
    "cm-1-3",
    "--type=merge",
    "-p",
    '{"data":{"tag":"by-hand"}}',
  ]);
}
