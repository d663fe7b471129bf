import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  driftFight,
  healBackoffMs,
  ignoreSnippet,
  isFight,
  nextHealAt,
  recordHeal,
} from "../../../src/reconciler/drift-fight.ts";
import { effectivePolicy } from "../../../src/reconciler/policy.ts";
import { envConfig } from "../../support/env.ts";

describe("effective policy", () => {
  const automated = envConfig("ns", { syncPolicy: { automated: { prune: true, selfHeal: true } } });
  const manual = envConfig("ns");
  const cases: Array<
    [
      string,
      Parameters<typeof effectivePolicy>,
      { automated: boolean; selfHeal: boolean; source: string; label: RegExp },
    ]
  > = [
    [
      "the config's automated policy",
      [automated, {}],
      { automated: true, selfHeal: true, source: "config", label: /^Automated \(Prune, SelfHeal\)$/ },
    ],
    [
      "automated.enabled: false, which keeps the settings but syncs manually only",
      [envConfig("ns", { syncPolicy: { automated: { prune: true, selfHeal: true, enabled: false } } }), {}],
      { automated: false, selfHeal: false, source: "config", label: /^<none>$/ },
    ],
    [
      "no automated policy",
      [manual, {}],
      { automated: false, selfHeal: false, source: "config", label: /^<none>$/ },
    ],
    [
      "a freeze, which wins over everything",
      [
        automated,
        {
          freeze: { by: "alice", at: "2026-11-29T10:00:00Z", reason: "incident 42" },
          policyOverride: { automated: true, prune: true, selfHeal: true, by: "bob", at: "t" },
        },
      ],
      {
        automated: false,
        selfHeal: false,
        source: "freeze",
        label: /^Frozen by alice since 2026-11-29T10:00:00Z \(incident 42\)$/,
      },
    ],
    [
      "a runtime override",
      [
        manual,
        {
          policyOverride: {
            automated: true,
            prune: false,
            selfHeal: true,
            by: "bob",
            at: "2026-11-29T11:00:00Z",
          },
        },
      ],
      {
        automated: true,
        selfHeal: true,
        source: "override",
        label: /^Automated \(SelfHeal\) \(set by bob at 2026-11-29T11:00:00Z\)$/,
      },
    ],
    [
      "an override to none",
      [automated, { policyOverride: { automated: false, prune: true, selfHeal: true, by: "bob", at: "t" } }],
      { automated: false, selfHeal: false, source: "override", label: /^<none> \(set by bob at t\)$/ },
    ],
  ];
  for (const [what, args, expected] of cases) {
    it(`follows ${what}`, () => {
      const p = effectivePolicy(...args);
      assert.equal(p.automated, expected.automated);
      assert.equal(p.selfHeal, expected.selfHeal);
      assert.equal(p.source, expected.source);
      assert.match(p.label, expected.label);
    });
  }
});

describe("drift fights", () => {
  const t0 = new Date("2026-11-29T12:00:00Z");
  const after = (s: number) => new Date(t0.getTime() + s * 1000);

  it("counts heals at one revision within 10 minutes, and starts over at a new revision or after the window", () => {
    let c = recordHeal(undefined, "r1", t0);
    c = recordHeal(c, "r1", after(30));
    assert.equal(isFight(c), false);
    c = recordHeal(c, "r1", after(60));
    assert.equal(isFight(c), true, "3 heals in a minute");
    assert.equal(recordHeal(c, "r2", after(90)).times.length, 1, "a new revision resets");
    assert.equal(recordHeal(c, "r1", after(11 * 60 + 30)).times.length, 1, "older heals leave the window");
  });

  it("backs off like Argo CD's self-heal: 2s x 3^n, capped at 5 minutes", () => {
    let c = recordHeal(undefined, "r", t0);
    const backoffs: number[] = [];
    for (let i = 1; i <= 8; i++) {
      backoffs.push(healBackoffMs(c));
      c = recordHeal(c, "r", after(i));
    }
    assert.deepEqual(backoffs, [0, 0, 2000, 6000, 18_000, 54_000, 162_000, 300_000]);
    assert.equal(nextHealAt(c), Date.parse(c.times.at(-1) as string) + 300_000);
  });

  it("names the object, the fields, the culprit manager and the ignoreDifferences entry to paste", () => {
    const live = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "web",
        namespace: "shop",
        managedFields: [
          {
            manager: "syncward",
            operation: "Apply",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:spec": { "f:template": {} } },
          },
          {
            manager: "horizontal-pod-autoscaler",
            operation: "Update",
            subresource: "scale",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:spec": { "f:replicas": {} } },
          },
        ],
      },
      spec: { replicas: 7 },
    };
    const fight = driftFight({
      key: "apps/Deployment:shop/web",
      paths: ["/spec/replicas"],
      live,
      heals: 3,
      backoffMs: 2000,
    });
    assert.equal(fight.object, "deployment.apps/web in shop");
    assert.deepEqual(fight.managers, ["horizontal-pod-autoscaler"]);
    assert.equal(fight.windowMinutes, 10);
    assert.equal(
      fight.ignoreSnippet,
      ignoreSnippet(
        { group: "apps", kind: "Deployment", namespace: "shop", name: "web" },
        ["/spec/replicas"],
        ["horizontal-pod-autoscaler"],
      ),
    );
    assert.match(
      fight.ignoreSnippet,
      /^ignoreDifferences:\n {2}- group: apps\n {4}kind: Deployment\n {4}name: web\n {4}namespace: shop\n {4}jsonPointers:\n {6}- \/spec\/replicas$/,
    );
  });
});
