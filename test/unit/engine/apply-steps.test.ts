// What the writes of a sync decide (src/engine/sync/apply-steps.ts), as tables.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  pruneStep,
  showsPlan,
  unprunedResults,
  withSyncFailHooks,
} from "../../../src/engine/sync/apply-steps.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const cm = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop" },
});

describe("whether the plan is shown", () => {
  const rows: Array<[string, number, number, boolean]> = [
    ["nothing to write and no hook: not shown", 0, 0, false],
    ["a write", 2, 0, true],
    ["a hook alone (a hook runs on every sync someone asked for)", 0, 1, true],
  ];
  for (const [name, changes, hooks, want] of rows)
    it(name, () => assert.equal(showsPlan(changes, hooks), want));
});

describe("how the prune follows the last wave", () => {
  const rows: Array<[string, Array<{ last?: boolean }>, ReturnType<typeof pruneStep>]> = [
    ["nothing to prune", [], "none"],
    ["prunes: at once", [{}, { last: false }], "now"],
    ["one PruneLast among them: after the applied objects are Healthy", [{}, { last: true }], "afterHealthy"],
  ];
  for (const [name, prunes, want] of rows) it(name, () => assert.equal(pruneStep(prunes), want));
});

describe("the prunes a failed sync did not reach", () => {
  it("each is OutOfSync and skipped, saying why", () => {
    assert.deepEqual(unprunedResults([{ live: cm("old") }]), [
      {
        group: "",
        kind: "ConfigMap",
        namespace: "shop",
        name: "old",
        status: "OutOfSync",
        action: "skipped",
        message: "configmap/old not pruned: the sync failed before pruning",
      },
    ]);
    assert.deepEqual(unprunedResults([]), []);
  });
});

describe("a failure's message with its SyncFail hooks", () => {
  const rows: Array<[string, Array<{ name: string; outcome: string; message: string }>, string]> = [
    ["no SyncFail hook: the message alone", [], "wave 1 failed"],
    [
      "each hook's outcome, its message when it did not succeed",
      [
        { name: "notify", outcome: "Succeeded", message: "done" },
        { name: "undo", outcome: "Failed", message: "undo: exit 1" },
      ],
      "wave 1 failed; SyncFail hooks: notify succeeded, undo undo: exit 1",
    ],
  ];
  for (const [name, ran, want] of rows)
    it(name, () => assert.equal(withSyncFailHooks("wave 1 failed", ran as never), want));
});
