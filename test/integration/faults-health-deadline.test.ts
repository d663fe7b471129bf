// A sync that would hang: a Deployment whose pod no node can take stays Progressing for as long as
// anyone waits (its progress deadline is an hour). The environment's syncPolicy.healthTimeout
// fails the sync instead, with a message that names the object and the state it was stuck in,
// and nothing of a later wave is applied.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

// kwok marks a pod Ready as soon as it is bound to its node; a selector no node matches keeps it
// Pending, so the Deployment never has an available replica.
const unschedulable = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  progressDeadlineSeconds: 3600
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {syncward.dev/no-such-node: "true"}
      containers: [{name: web, image: nginx}]
`;

const later = `apiVersion: v1
kind: ConfigMap
metadata:
  name: later
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {a: b}
`;

describe("a sync that never becomes healthy", () => {
  it("fails at the environment's healthTimeout, naming the object and what it waited for", async () => {
    const ns = await cluster.namespace("hang");
    const stateNs = await cluster.stateNamespace("hang-state");
    const repo = makeRepo({ "app/web.yaml": unschedulable, "app/later.yaml": later });
    const store = new StateStore(cluster.syncwardClient, stateNs);
    const events: ReconcilerEvent[] = [];
    const controller = new EnvironmentController({
      app: "hang",
      env: envConfig(ns, {
        source: { path: "app" },
        syncPolicy: { healthTimeout: "3s", retry: { limit: 3, backoff: { duration: "1s" } } },
      }),
      client: cluster.syncwardClient,
      store,
      source: new LocalGitSource(repo.dir, cache),
      emit: (e) => events.push(e),
      log: pino({ level: "silent" }),
      pollIntervalMs: 0,
    });

    const outcome = await controller.sync({ trigger: "cli", actor: "tester" });
    assert.equal(outcome.phase, "Failed");
    assert.match(
      outcome.message,
      new RegExp(
        `^timed out waiting for deployment\\.apps/web to become healthy within 3s \\(syncPolicy\\.healthTimeout\\): deployment\\.apps/web in namespace ${ns} is Progressing: Waiting for rollout to finish: .+`,
      ),
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "later"), undefined, "wave 1 not applied");
    assert.match(outcome.resources.find((r) => r.name === "later")?.message ?? "", /not applied/);

    // Retried like any failure (Argo CD does), then one failed entry and the revision marked stuck.
    assert.match(outcome.message, /\(gave up after 4 attempts\)$/);
    const state = await store.load(controller.instance);
    assert.equal(state.history[0]?.retried?.length, 3);
    assert.deepEqual(
      state.history.map((h) => [h.result, h.message]),
      [["Failed", outcome.message]],
    );
    assert.equal(state.stuck?.revision, repo.head());
    assert.equal(state.stuck?.reason, outcome.message);
    assert.equal(state.syncStatus, "OutOfSync");
    assert.deepEqual(
      events.filter((e) => e.type === "synced" || e.type === "stuck").map((e) => e.type),
      ["synced", "stuck"],
    );
  });
});
