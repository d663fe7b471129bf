// The phases of one sync that write nothing (a guard's refusal, a dry run), run through
// syncEnvironment with an assessment given; and, pure, which hooks a sync runs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Assessment } from "../../../src/engine/assess.ts";
import type { HookTask } from "../../../src/engine/hooks/plan.ts";
import type { ApplyTask, Plan, PruneTask } from "../../../src/engine/plan.ts";
import { scopeOf } from "../../../src/engine/sync/scope.ts";
import { type SyncRequest, syncEnvironment } from "../../../src/engine/sync.ts";
import type { HookMode } from "../../../src/engine/types.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { envConfig } from "../../support/env.ts";

const SHA = "a".repeat(40);
const obj = (kind: string, name: string, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
  kind,
  metadata: { name, namespace: "dev", ...(annotations ? { annotations } : {}) },
});
const task = (o: KubeObject, action: ApplyTask["action"], extra: Partial<ApplyTask> = {}): ApplyTask => ({
  key: `${o.kind}/${o.metadata.name}`,
  obj: o,
  action,
  drifted: [],
  ...extra,
});
const hook = (phase: HookTask["phase"], name: string): HookTask => ({
  id: name,
  phase,
  wave: 0,
  policies: [],
  obj: { apiVersion: "batch/v1", kind: "Job", metadata: { name, namespace: "dev" } },
  display: `job.batch/${name}`,
});
const prune = (o: KubeObject, extra: Partial<PruneTask> = {}): PruneTask => ({
  key: `${o.kind}/${o.metadata.name}`,
  live: o,
  wave: 0,
  ...extra,
});

function assessment(plan: Partial<Plan>, hooks: HookTask[] = [], tracked: KubeObject[] = []): Assessment {
  return {
    prepared: [],
    tracked,
    live: new Map(),
    plan: { steps: [], unchanged: [], prunes: [], requiresPruning: [], ...plan },
    denied: new Map(),
    hooks,
    skipped: [],
  };
}

const client = { counts: { requests: 0, writes: 0, byVerb: {} } } as unknown as KubeClient;
const target = { instance: "app.dev", env: envConfig("dev") };
const request = (a: Assessment, extra: Partial<SyncRequest> = {}): SyncRequest => ({
  revision: SHA,
  objects: [],
  prune: true,
  assessment: a,
  ...extra,
});

describe("which hooks a sync runs", () => {
  const hooks = [hook("PreSync", "migrate"), hook("SyncFail", "notify")];
  const changed = assessment(
    { steps: [{ phase: 1, wave: 0, foundational: false, tasks: [task(obj("Service", "web"), "update")] }] },
    hooks,
  );
  const unchanged = assessment({}, hooks);
  const rows: Array<[string, Assessment, Partial<SyncRequest>, string | undefined, number, number]> = [
    ["every explicit sync runs them", unchanged, { hooks: "always" }, undefined, 1, 1],
    ["unset means always", unchanged, {}, undefined, 1, 1],
    ["a new revision that changes something runs them", changed, { hooks: "ifChanged" }, undefined, 1, 1],
    [
      "a new revision that changes nothing does not",
      unchanged,
      { hooks: "ifChanged", hooksDigest: "same" },
      "same",
      0,
      1,
    ],
    [
      "a revision that changes only a hook runs them",
      unchanged,
      { hooks: "ifChanged", hooksDigest: "old" },
      "new",
      1,
      1,
    ],
    ["never: none, not even SyncFail", changed, { hooks: "never" as HookMode }, undefined, 0, 0],
    [
      "a sync of named objects only (self-heal) runs none",
      changed,
      { only: new Set(["Service/web"]) },
      undefined,
      0,
      0,
    ],
  ];
  for (const [name, a, req, digest, run, onFailure] of rows)
    it(name, () => {
      const scope = scopeOf(a, req, digest);
      assert.equal(scope.hooks.length, run);
      assert.equal(scope.onFailure.length, onFailure);
    });
  it("only the named objects are applied", () => {
    const two = assessment({
      steps: [
        {
          phase: 1,
          wave: 0,
          foundational: false,
          tasks: [task(obj("Service", "a"), "update"), task(obj("Service", "b"), "update")],
        },
      ],
      prunes: [prune(obj("ConfigMap", "old"))],
    });
    const scope = scopeOf(two, { only: new Set(["Service/b"]) }, undefined);
    assert.deepEqual(
      scope.pending.map((t) => t.key),
      ["Service/b"],
    );
    assert.equal(scope.changes, 2);
  });
});

describe("a sync that writes nothing", () => {
  it("refused by a guard: every change skipped, the refusal said, the inventory kept", async () => {
    const a = assessment({
      steps: [{ phase: 1, wave: 0, foundational: false, tasks: [task(obj("Service", "web"), "create")] }],
      unchanged: [task(obj("ConfigMap", "cfg"), "unchanged")],
      refusal: "refused: would prune 3 of 4 objects (limit 1)",
    });
    const inventory = [{ apiVersion: "v1", kind: "Secret" }];
    const outcome = await syncEnvironment(client, target, request(a, { inventory }));
    assert.equal(outcome.phase, "Refused");
    assert.equal(outcome.message, "refused: would prune 3 of 4 objects (limit 1)");
    assert.deepEqual(
      outcome.resources.map((r) => [r.name, r.action, r.message]),
      [
        ["cfg", "unchanged", "configmap/cfg unchanged"],
        ["web", "skipped", "not applied: sync refused"],
      ],
    );
    assert.deepEqual(outcome.inventory, inventory);
    assert.equal(outcome.writes, 0);
  });

  it("a dry run: what would be created, configured, pruned and run", async () => {
    const a = assessment(
      {
        steps: [
          {
            phase: 1,
            wave: 0,
            foundational: false,
            tasks: [
              task(obj("Service", "web"), "create"),
              task(obj("Deployment", "web"), "update", { drifted: ["spec.replicas"] }),
            ],
          },
        ],
        prunes: [prune(obj("ConfigMap", "old"))],
        requiresPruning: [prune(obj("ConfigMap", "kept"), { kept: "Prune=false" })],
      },
      [hook("PreSync", "migrate")],
    );
    const outcome = await syncEnvironment(client, target, request(a, { dryRun: true }));
    assert.equal(outcome.phase, "Succeeded");
    assert.equal(outcome.dryRun, true);
    assert.equal(
      outcome.message,
      "would apply 2 objects, 0 unchanged, 1 to prune, 1 require pruning, kept by their sync options, 1 hook would run",
    );
    assert.deepEqual(
      outcome.resources.map((r) => r.message),
      [
        "configmap/kept requires pruning, kept (Prune=false)",
        "service/web created (dry run)",
        "deployment.apps/web configured (dry run)",
        "job.batch/migrate PreSync hook would run (dry run)",
        "configmap/old pruned (dry run)",
      ],
    );
    assert.equal(typeof outcome.hooksDigest, "string");
  });

  it("a dry run with an object syncward may not write fails it by name", async () => {
    const a = assessment({
      steps: [
        {
          phase: 1,
          wave: 0,
          foundational: false,
          tasks: [task(obj("Service", "web"), "create", { denied: "forbidden: cannot patch services" })],
        },
      ],
    });
    const outcome = await syncEnvironment(client, target, request(a, { dryRun: true }));
    assert.equal(outcome.phase, "Failed");
    assert.equal(outcome.message, "1 object(s) failed: service/web failed: forbidden: cannot patch services");
    assert.equal(outcome.totals.failed, 1);
  });

  it("sync options it cannot honour are named in the message", async () => {
    const odd = obj("Service", "web", { "argocd.argoproj.io/sync-options": "NoSuchOption=true" });
    const a = assessment(
      { steps: [{ phase: 1, wave: 0, foundational: false, tasks: [task(odd, "create")] }] },
      [],
      [odd],
    );
    const outcome = await syncEnvironment(client, target, request(a, { dryRun: true }));
    assert.match(
      outcome.message,
      /^would apply 1 object, .*; sync options not honoured: service\/web: NoSuchOption=true$/,
    );
  });
});
