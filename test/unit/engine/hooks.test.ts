import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { roleOf } from "../../../src/engine/hooks/annotations.ts";
import { generateNameProblem, splitHooks } from "../../../src/engine/hooks/plan.ts";
import { placements } from "../../../src/engine/plan.ts";
import { slotsOf } from "../../../src/engine/slots.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const job = (
  annotations: Record<string, string>,
  meta: Partial<KubeObject["metadata"]> = { name: "migrate" },
) =>
  ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { namespace: "shop", ...meta, annotations },
  }) as KubeObject;

describe("roleOf: what annotations make of an object", () => {
  const cases: Array<[string, Record<string, string>, unknown]> = [
    ["no annotation: a managed resource", {}, { role: "resource" }],
    [
      "Argo CD PreSync, default deletion policy BeforeHookCreation",
      { "argocd.argoproj.io/hook": "PreSync" },
      { role: "hook", spec: { phases: ["PreSync"], wave: 0, policies: ["BeforeHookCreation"] } },
    ],
    [
      "several phases and several policies, wave from sync-wave",
      {
        "argocd.argoproj.io/hook": "PreSync, PostSync",
        "argocd.argoproj.io/hook-delete-policy": "HookSucceeded,HookFailed",
        "argocd.argoproj.io/sync-wave": "-2",
      },
      {
        role: "hook",
        spec: { phases: ["PreSync", "PostSync"], wave: -2, policies: ["HookSucceeded", "HookFailed"] },
      },
    ],
    ["Skip is never applied", { "argocd.argoproj.io/hook": "Skip" }, { role: "skip", reason: "hook: Skip" }],
    [
      "Helm pre-install,pre-upgrade with weight and policies",
      {
        "helm.sh/hook": "pre-install,pre-upgrade",
        "helm.sh/hook-weight": "5",
        "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
      },
      {
        role: "hook",
        spec: { phases: ["PreSync"], wave: 5, policies: ["BeforeHookCreation", "HookSucceeded"] },
      },
    ],
    [
      "Helm post-install and post-upgrade map to PostSync",
      { "helm.sh/hook": "post-install,post-upgrade" },
      { role: "hook", spec: { phases: ["PostSync"], wave: 0, policies: ["BeforeHookCreation"] } },
    ],
    ["Helm test hooks are skipped", { "helm.sh/hook": "test" }, { role: "skip", reason: "Helm test hook" }],
    [
      "an Argo CD annotation wins over a Helm one",
      { "argocd.argoproj.io/hook": "Sync", "helm.sh/hook": "pre-install", "helm.sh/hook-weight": "9" },
      { role: "hook", spec: { phases: ["Sync"], wave: 0, policies: ["BeforeHookCreation"] } },
    ],
  ];
  for (const [name, annotations, expected] of cases)
    it(name, () => assert.deepEqual(roleOf(job(annotations)), expected));

  it("refuses PostDelete with a message saying why it never runs", () => {
    const role = roleOf(job({ "argocd.argoproj.io/hook": "PostDelete" }));
    assert.equal(role.role, "skip");
    assert.match(
      role.role === "skip" ? role.reason : "",
      /PostDelete hooks run when an Argo CD Application is deleted/,
    );
  });
  it("names an unknown hook type", () => {
    const role = roleOf(job({ "argocd.argoproj.io/hook": "PreSnyc" }));
    assert.match(role.role === "skip" ? role.reason : "", /unknown hook type PreSnyc/);
  });
});

describe("splitHooks", () => {
  it("gives a multi-phase hook one task per phase, in phase then wave order, and keeps resources apart", () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" } } as KubeObject;
    const split = splitHooks([
      job({ "argocd.argoproj.io/hook": "PostSync" }, { name: "smoke" }),
      job({ "argocd.argoproj.io/hook": "PreSync,PostSync" }, { generateName: "maint-" } as never),
      cm,
      job({ "argocd.argoproj.io/hook": "Skip" }, { name: "manual" }),
    ]);
    assert.deepEqual(split.resources, [cm]);
    assert.deepEqual(
      split.hooks.map((h) => [h.phase, h.display]),
      [
        ["PreSync", "job.batch/maint-*"],
        ["PostSync", "job.batch/maint-*"],
        ["PostSync", "job.batch/smoke"],
      ],
    );
    assert.equal(split.hooks[0]?.id, split.hooks[1]?.id, "both phases of one hook share its identity");
    assert.deepEqual(
      split.skipped.map((s) => s.obj.metadata.name),
      ["manual"],
    );
  });

  it("allows generateName only on hooks", () => {
    assert.equal(
      generateNameProblem(job({ "argocd.argoproj.io/hook": "PreSync" }, { generateName: "m-" } as never)),
      undefined,
    );
    assert.match(
      generateNameProblem(job({}, { generateName: "m-" } as never)) ?? "",
      /only supported on hooks/,
    );
  });
});

describe("the shape of an operation", () => {
  it("puts a wave's resources and hooks together, phases first, SyncFail aside", () => {
    const split = splitHooks([
      job({ "argocd.argoproj.io/hook": "PreSync" }, { name: "a" }),
      job({ "argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "2" }, { name: "b" }),
      job({ "argocd.argoproj.io/hook": "PostSync" }, { name: "c" }),
      job({ "argocd.argoproj.io/hook": "SyncFail" }, { name: "d" }),
    ]);
    const step = (wave: number) => ({ phase: 1, wave, foundational: false, tasks: [] });
    assert.deepEqual(
      slotsOf([step(0), step(2)], split.hooks).map((s) => [
        s.phase,
        s.wave,
        s.steps.length,
        s.hooks.map((h) => h.obj.metadata.name),
      ]),
      [
        [0, 0, 0, ["a"]],
        [1, 0, 1, []],
        [1, 2, 1, ["b"]],
        [2, 0, 0, ["c"]],
      ],
    );
  });

  it("hoists a Namespace into the PreSync phase of a hook that runs in it, and a CRD to its first custom resource", () => {
    const ns = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop", annotations: { "argocd.argoproj.io/sync-wave": "3" } },
    } as KubeObject;
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com", annotations: { "argocd.argoproj.io/sync-wave": "1" } },
      spec: { group: "example.com", names: { kind: "Widget" } },
    } as KubeObject;
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "other" },
    } as KubeObject;
    const other = { apiVersion: "v1", kind: "Namespace", metadata: { name: "quiet" } } as KubeObject;
    const hook = job({ "argocd.argoproj.io/hook": "PreSync" });
    const placed = placements([ns, crd, widget, other], [{ phase: 0, wave: -1, obj: hook }]);
    assert.deepEqual([placed.get(ns)?.phase, placed.get(ns)?.wave], [0, -1]);
    assert.deepEqual([placed.get(crd)?.phase, placed.get(crd)?.wave], [1, 0]);
    assert.deepEqual([placed.get(other)?.phase, placed.get(other)?.wave], [1, 0], "nothing needs it earlier");
  });
});
