import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Plan } from "../../../../src/engine/plan.ts";
import { changesOf, hookModeOf, originsOf } from "../../../../src/reconciler/release/sync-step.ts";
import type { Trigger } from "../../../../src/state/types.ts";

describe("when a release runs its hooks", () => {
  const rows: Array<[Trigger, "ifChanged" | "always"]> = [
    ["push", "ifChanged"],
    ["merge", "ifChanged"],
    ["poll", "ifChanged"],
    ["cli", "always"],
    ["comment", "always"],
    ["retry", "always"],
  ];
  for (const [trigger, mode] of rows)
    it(`${trigger}: ${mode === "always" ? "every sync" : "only when it changes something"}`, () =>
      assert.equal(hookModeOf(trigger), mode));
});

it("a failure names the file and line an object is declared at (line 1 when unknown)", () => {
  const origins = originsOf({
    objects: [],
    files: new Map([
      ["apps/v1/Deployment/prod/web", "deploy/web.yaml"],
      ["v1/Service/prod/web", "deploy/svc.yaml"],
    ]),
    lines: new Map([["apps/v1/Deployment/prod/web", 12]]),
    renderer: "directory",
  });
  assert.deepEqual(Object.fromEntries(origins), {
    "apps/v1/Deployment/prod/web": "deploy/web.yaml:12",
    "v1/Service/prod/web": "deploy/svc.yaml:1",
  });
});

it("the changes a sync announces: every task of every wave and every prune", () => {
  const task = {} as Plan["steps"][number]["tasks"][number];
  const prune = {} as Plan["prunes"][number];
  const plan = {
    steps: [{ tasks: [task, task] }, { tasks: [task] }],
    unchanged: [task],
    prunes: [prune],
    requiresPruning: [prune],
  } as unknown as Plan;
  assert.equal(changesOf(plan), 4);
  assert.equal(changesOf({ ...plan, steps: [], prunes: [] }), 0);
});
