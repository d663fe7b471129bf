import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planSync } from "../../../src/engine/plan.ts";
import { pruneGroups } from "../../../src/engine/prune.ts";
import { mayRecreate, parseResourceOptions } from "../../../src/engine/sync-options.ts";
import { withTracking } from "../../../src/engine/tracking.ts";
import { type KubeObject, keyOf, keyString } from "../../../src/kube/object.ts";

const opts = (value: string, compare?: string) =>
  parseResourceOptions({
    "argocd.argoproj.io/sync-options": value,
    ...(compare ? { "argocd.argoproj.io/compare-options": compare } : {}),
  });

describe("per-resource sync options", () => {
  const cases: Array<[string, ReturnType<typeof opts>]> = [
    ["Prune=false", { prune: "false", unknown: [] }],
    ["Prune=confirm", { prune: "confirm", unknown: [] }],
    ["Delete=confirm", { prune: "confirm", unknown: [] }],
    ["Prune=false,Delete=confirm", { prune: "false", unknown: [] }],
    [
      "PruneLast=true, Replace=true,ServerSideApply=false,Validate=false",
      { pruneLast: true, replace: true, serverSideApply: false, validate: false, unknown: [] },
    ],
    [
      "SkipDryRunOnMissingResource=true,Force=true,FailOnSharedResource=true",
      { skipDryRunOnMissingResource: true, force: true, failOnSharedResource: true, unknown: [] },
    ],
    ["Prune=maybe,Recreate=true,Force", { unknown: ["Prune=maybe", "Recreate=true", "Force"] }],
  ];
  for (const [value, expected] of cases) it(value, () => assert.deepEqual(opts(value), expected));

  it("reads compare-options IgnoreExtraneous and names unknown compare options", () => {
    assert.deepEqual(opts("", "IgnoreExtraneous,ServerSideDiff=true"), {
      ignoreExtraneous: true,
      unknown: ["compare-options ServerSideDiff=true"],
    });
  });

  it("never deletes a CRD, Namespace or PVC to recreate it", () => {
    assert.deepEqual(
      ["CustomResourceDefinition", "Namespace", "PersistentVolumeClaim", "Job"].map(mayRecreate),
      [false, false, false, true],
    );
  });
});

describe("pruning with options", () => {
  const I = "shop.dev";
  const cm = (name: string, annotations: Record<string, string> = {}) =>
    withTracking(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "shop", annotations } },
      I,
    );
  const plan = (live: KubeObject[], over: { prune?: boolean; confirmPrune?: boolean } = {}) =>
    planSync({
      instance: I,
      desired: [cm("kept")],
      live: new Map(live.map((o) => [keyString(keyOf(o)), o])),
      compare: () => ({ inSync: true, paths: [] }),
      prune: over.prune ?? true,
      confirmPrune: over.confirmPrune,
      allowEmpty: false,
      failOnSharedResource: false,
    });
  const data = cm("data", { "argocd.argoproj.io/sync-options": "Prune=false" });
  const careful = cm("careful", { "argocd.argoproj.io/sync-options": "Delete=confirm" });
  const plain = cm("plain");
  const extra = cm("extra", { "argocd.argoproj.io/compare-options": "IgnoreExtraneous" });

  it("keeps Prune=false and unconfirmed Prune=confirm objects, saying why", () => {
    const p = plan([data, careful, plain]);
    assert.deepEqual(
      p.prunes.map((t) => t.live.metadata.name),
      ["plain"],
    );
    assert.deepEqual(
      p.requiresPruning.map((t) => [t.live.metadata.name, t.kept]),
      [
        ["data", "Prune=false"],
        ["careful", "Prune=confirm: waits for a sync with --confirm-prune"],
      ],
    );
  });

  it("prunes a Prune=confirm object once confirmed, never a Prune=false one", () => {
    const p = plan([data, careful], { confirmPrune: true });
    assert.deepEqual(
      p.prunes.map((t) => t.live.metadata.name),
      ["careful"],
    );
  });

  it("does not count an IgnoreExtraneous object as requiring pruning when prune is off", () => {
    const p = plan([extra, plain], { prune: false });
    assert.deepEqual(
      p.requiresPruning.map((t) => t.live.metadata.name),
      ["plain"],
    );
    assert.deepEqual(
      p.ignoredExtraneous?.map((t) => t.live.metadata.name),
      ["extra"],
    );
  });

  it("orders prunes by wave from the highest down, PruneLast ones after all others", () => {
    const t = (name: string, wave: number, last = false) => ({ key: name, live: cm(name), wave, last });
    assert.deepEqual(
      pruneGroups([t("a", 0), t("b", 2), t("c", 0, true), t("d", 2), t("e", 5, true)]).map((g) =>
        g.map((p) => p.key),
      ),
      [["b", "d"], ["a"], ["e"], ["c"]],
    );
  });
});
