import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareForSync } from "../../../src/engine/order.ts";
import { type PlanInput, planSync, pruneBudget } from "../../../src/engine/plan.ts";
import { isManagedBy, withTracking } from "../../../src/engine/tracking.ts";
import { type KubeObject, keyOf, keyString } from "../../../src/kube/object.ts";

const I = "shop.dev";
const obj = (
  kind: string,
  name: string,
  extra: Partial<KubeObject["metadata"]> = {},
  apiVersion = "v1",
): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    namespace: kind === "Namespace" || kind === "CustomResourceDefinition" ? undefined : "shop",
    ...extra,
  },
});
const tracked = (o: KubeObject) => withTracking(o, I);
const liveMap = (...objs: KubeObject[]) => new Map(objs.map((o) => [keyString(keyOf(o)), o]));
const inSync = () => ({ inSync: true, paths: [] });

function plan(over: Partial<PlanInput>) {
  return planSync({
    instance: I,
    desired: [],
    live: new Map(),
    compare: inSync,
    prune: false,
    allowEmpty: false,
    failOnSharedResource: false,
    ...over,
  });
}

describe("planSync", () => {
  it("orders steps by wave, then kind, with namespaces and CRDs in steps of their own", () => {
    const desired = [
      obj("Deployment", "web"),
      obj("ConfigMap", "cfg"),
      obj("Namespace", "shop"),
      obj("Widget", "w", {}, "example.com/v1"),
      obj("CustomResourceDefinition", "widgets.example.com", {}, "apiextensions.k8s.io/v1"),
      obj("Service", "late", { annotations: { "argocd.argoproj.io/sync-wave": "5" } }),
      obj("Job", "early", { annotations: { "argocd.argoproj.io/sync-wave": "-1" } }),
    ].map(tracked);
    const p = plan({ desired });
    assert.deepEqual(
      p.steps.map((s) => [s.wave, s.foundational, s.tasks.map((t) => t.obj.metadata.name)]),
      [
        // The Namespace moves ahead of its first dependant, the wave -1 Job in it (Argo CD's hoisting).
        [-1, true, ["shop"]],
        [-1, false, ["early"]],
        [0, false, ["cfg"]],
        [0, true, ["widgets.example.com"]],
        [0, false, ["web", "w"]],
        [5, false, ["late"]],
      ],
    );
    assert.ok(p.steps.every((s) => s.tasks.every((t) => t.action === "create")));
  });

  it("skips objects whose hash and content match, and updates drifted or re-declared ones", () => {
    const a = tracked(obj("ConfigMap", "a"));
    const b = tracked(obj("ConfigMap", "b"));
    const bChangedInGit = tracked({ ...obj("ConfigMap", "b"), data: { x: "2" } } as KubeObject);
    const c = tracked(obj("ConfigMap", "c"));
    const p = plan({
      desired: [a, bChangedInGit, c],
      live: liveMap(a, b, c),
      compare: (d) => (d.metadata.name === "c" ? { inSync: false, paths: ["/data/k"] } : inSync()),
    });
    assert.deepEqual(
      p.unchanged.map((t) => t.obj.metadata.name),
      ["a"],
    );
    const tasks = p.steps.flatMap((s) => s.tasks);
    assert.deepEqual(
      tasks.map((t) => [t.obj.metadata.name, t.action, t.drifted]),
      [
        ["b", "update", []],
        ["c", "update", ["/data/k"]],
      ],
    );
  });

  it("prunes only objects managed by this instance, in reverse order, and only with prune on", () => {
    const keep = tracked(obj("ConfigMap", "keep"));
    const oldDeploy = tracked(obj("Deployment", "old"));
    const oldCm = tracked(obj("ConfigMap", "old"));
    const foreign = withTracking(obj("ConfigMap", "foreign"), "other.dev");
    const copied = { ...obj("ConfigMap", "copy"), metadata: { ...oldCm.metadata, name: "copy" } };
    const live = liveMap(keep, oldDeploy, oldCm, foreign, copied);
    assert.equal(isManagedBy(copied, I), false, "a copied annotation does not make an object ours");
    const on = plan({ desired: [keep], live, prune: true });
    assert.deepEqual(
      on.prunes.map((p) => `${p.live.kind}/${p.live.metadata.name}`),
      ["Deployment/old", "ConfigMap/old"],
    );
    const off = plan({ desired: [keep], live, prune: false });
    assert.deepEqual(off.prunes, []);
    assert.deepEqual(
      off.requiresPruning.map((p) => p.live.metadata.name),
      ["old", "old"],
    );
  });

  it("refuses an empty render while the environment has live objects, unless allowEmpty", () => {
    const live = liveMap(...["a", "b", "c"].map((n) => tracked(obj("ConfigMap", n))));
    assert.equal(
      plan({ live, prune: true }).refusal?.startsWith(
        "render produced 0 objects; refusing to prune 3 live objects",
      ),
      true,
    );
    assert.equal(
      plan({ live, prune: false }).refusal?.startsWith("render produced 0 objects"),
      true,
      "manual syncs are guarded too",
    );
    assert.equal(plan({ live, prune: true, allowEmpty: true }).refusal, undefined);
    assert.equal(
      plan({ live: new Map(), prune: true }).refusal,
      undefined,
      "nothing to lose: an empty environment stays empty",
    );
  });

  const budgetCases: Array<[number | string | undefined, number, number | undefined]> = [
    [undefined, 10, undefined],
    [3, 10, 3],
    ["20%", 10, 2],
    ["50%", 3, 1],
    ["0%", 5, 0],
  ];
  for (const [limit, managed, expected] of budgetCases) {
    it(`computes a prune budget of ${expected} for limit ${limit} over ${managed} managed objects`, () => {
      assert.equal(pruneBudget(limit, managed), expected);
    });
  }

  it("refuses a sync over the prune budget unless overridden", () => {
    const live = liveMap(...["a", "b", "c", "d"].map((n) => tracked(obj("ConfigMap", n))));
    const desired = [tracked(obj("ConfigMap", "a"))];
    const refused = plan({ desired, live, prune: true, pruneLimit: "50%" });
    assert.match(refused.refusal ?? "", /would delete 3 objects, more than the limit of 2/);
    assert.equal(refused.steps.length, 0);
    const overridden = plan({ desired, live, prune: true, pruneLimit: "50%", overridePruneLimit: true });
    assert.equal(overridden.refusal, undefined);
    assert.equal(overridden.prunes.length, 3);
  });

  it("flags objects managed by another environment, and refuses them with FailOnSharedResource", () => {
    const mine = tracked(obj("ConfigMap", "shared"));
    const theirs = withTracking(obj("ConfigMap", "shared"), "other.prod");
    const taken = plan({ desired: [mine], live: liveMap(theirs) });
    assert.equal(taken.steps[0]?.tasks[0]?.sharedWith, "other.prod");
    const refused = plan({ desired: [mine], live: liveMap(theirs), failOnSharedResource: true });
    assert.match(refused.refusal ?? "", /configmap\/shared is managed by other\.prod/);
  });
});

describe("sync order", () => {
  it("puts Argo CD's kind order inside a wave and custom kinds last", () => {
    const names = [
      "Deployment",
      "Service",
      "Widget",
      "ServiceAccount",
      "Namespace",
      "Ingress",
      "ConfigMap",
      "Secret",
    ]
      .map((k) => obj(k, "x"))
      .sort(compareForSync)
      .map((o) => o.kind);
    assert.deepEqual(names, [
      "Namespace",
      "ServiceAccount",
      "Secret",
      "ConfigMap",
      "Service",
      "Deployment",
      "Ingress",
      "Widget",
    ]);
  });

  it("keeps a step's tasks in kind order, the order they are started in", () => {
    const desired = ["Deployment", "ConfigMap", "ConfigMap", "Service", "Deployment"].map((k, i) =>
      tracked(obj(k, `n${i}`)),
    );
    const [step] = plan({ desired }).steps;
    assert.ok(step);
    assert.deepEqual(
      step.tasks.map((t) => t.obj.kind),
      ["ConfigMap", "ConfigMap", "Service", "Deployment", "Deployment"],
    );
  });
});

describe("hooks in the live state", () => {
  it("never prunes a hook, even one an older syncward applied as a managed object", () => {
    const hook = tracked(obj("Job", "migrate", { annotations: { "argocd.argoproj.io/hook": "PreSync" } }));
    const gone = tracked(obj("ConfigMap", "gone"));
    const p = plan({ desired: [tracked(obj("ConfigMap", "main"))], live: liveMap(hook, gone), prune: true });
    assert.deepEqual(
      p.prunes.map((t) => t.live.metadata.name),
      ["gone"],
    );
  });
});
