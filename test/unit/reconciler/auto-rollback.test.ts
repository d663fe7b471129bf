// Automatic rollback's decision and its clock, as tables: when a bad release is rolled back, to
// which entry, and every path that must not roll back (a pin, a freeze, once per release, a CRD
// or a hook in between, nothing Healthy to go back to).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RollbackRule } from "../../../src/config/types.ts";
import { type AutoRollbackInput, autoRollbackDecision } from "../../../src/reconciler/auto-rollback.ts";
import { historyEntryOf } from "../../../src/reconciler/history-entry.ts";
import { badRelease, nextDegradedStretch } from "../../../src/state/degraded-stretch.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const T0 = "2026-01-01T12:00:00.000Z";
const RULE: RollbackRule = { onDegraded: 300_000, acrossCRDChanges: false, acrossHooks: false };

function entry(id: number, revision: string, extra: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    id,
    startedAt: T0,
    finishedAt: T0,
    revision,
    trigger: "push",
    actor: "alice",
    result: "Succeeded",
    message: "",
    counts: { created: 1, configured: 0, pruned: 0, failed: 0 },
    ...extra,
  };
}

/** A Healthy at history 1, then B released (history 2) and Degraded since T0. */
function input(
  over: Partial<AutoRollbackInput["state"]> = {},
  at = "2026-01-01T12:06:00.000Z",
): AutoRollbackInput {
  return {
    rule: RULE,
    automated: true,
    now: new Date(at),
    state: {
      history: [entry(1, A), entry(2, B)],
      healthRecords: [
        { revision: A, since: "2026-01-01T11:00:00.000Z", until: "2026-01-01T11:59:00.000Z", ended: "moved" },
      ],
      degraded: { revision: B, since: T0, why: "Degraded" },
      ...over,
    },
  };
}

describe("automatic rollback decision", () => {
  it("rolls a release back to the last Healthy one once it has been bad for onDegraded", () => {
    const d = autoRollbackDecision(input());
    assert.equal(d.kind, "rollback");
    if (d.kind !== "rollback") return;
    assert.deepEqual(d.to, { id: 1, revision: A });
    assert.equal(d.revision, B);
    assert.match(d.note.reason, /^bbbbbbb stayed Degraded for 5m \(since 2026-01-01T12:00:00.000Z\)$/);
    assert.deepEqual(d.note.evidence, [
      `bbbbbbb: Degraded since ${T0}`,
      "aaaaaaa: Healthy from 2026-01-01T11:00:00.000Z to 2026-01-01T11:59:00.000Z (history 1)",
    ]);
  });

  it("waits until onDegraded has passed, and says until when", () => {
    const d = autoRollbackDecision(input({}, "2026-01-01T12:04:00.000Z"));
    assert.deepEqual(d, { kind: "wait", until: new Date("2026-01-01T12:05:00.000Z") });
  });

  const none: Array<[string, AutoRollbackInput]> = [
    ["no rule", { ...input(), rule: undefined }],
    ["not automated (frozen, or turned off)", { ...input(), automated: false }],
    ["nothing bad", input({ degraded: undefined })],
    [
      "pinned (a rollback's or a person's pin)",
      input({ pin: { revision: A, historyId: 1, by: "syncward", at: T0, reason: "" } }),
    ],
    [
      "this release was decided already",
      input({ autoRollbacks: [{ revision: B, at: T0, outcome: "rolled back" }] }),
    ],
  ];
  for (const [name, given] of none)
    it(`does nothing when ${name}`, () => assert.deepEqual(autoRollbackDecision(given), { kind: "none" }));

  it("decides another bad release although an earlier one was decided", () => {
    const d = autoRollbackDecision(
      input({ autoRollbacks: [{ revision: C, at: T0, outcome: "rolled back" }] }),
    );
    assert.equal(d.kind, "rollback");
  });

  const refusals: Array<[string, AutoRollbackInput, RegExp]> = [
    ["nothing was ever Healthy", input({ healthRecords: [] }), /no earlier release was Healthy/],
    [
      "only the bad release itself was Healthy (before it turned)",
      input({ healthRecords: [{ revision: B, since: T0 }] }),
      /no earlier release was Healthy/,
    ],
    ["the Healthy release left the history", input({ history: [entry(2, B)] }), /left the history/],
    [
      "a release in between changed a CRD",
      input({ history: [entry(1, A), entry(2, B, { crds: ["widgets.example.com"] })] }),
      /CustomResourceDefinition widgets\.example\.com \(rollback\.acrossCRDChanges: true allows it\)/,
    ],
    [
      "a release in between ran a hook",
      input({
        history: [
          entry(1, A),
          entry(2, B, {
            hooks: [{ kind: "Job", name: "migrate", phase: "PreSync", wave: 0, outcome: "Succeeded" }],
          }),
        ],
      }),
      /hook PreSync migrate \(rollback\.acrossHooks: true allows it\)/,
    ],
  ];
  for (const [name, given, why] of refusals)
    it(`refuses, saying why, when ${name}`, () => {
      const d = autoRollbackDecision(given);
      assert.equal(d.kind, "refuse");
      if (d.kind === "refuse") assert.match(d.why, why);
    });

  it("goes past a CRD change or a hook when the rule allows it, not past a skipped hook otherwise", () => {
    const crd = input({ history: [entry(1, A), entry(2, B, { crds: ["widgets.example.com"] })] });
    assert.equal(
      autoRollbackDecision({ ...crd, rule: { ...RULE, acrossCRDChanges: true } }).kind,
      "rollback",
    );
    const skipped = input({
      history: [
        entry(1, A),
        entry(2, B, { hooks: [{ kind: "Job", name: "m", phase: "PreSync", wave: 0, outcome: "Skipped" }] }),
      ],
    });
    assert.equal(autoRollbackDecision(skipped).kind, "rollback");
  });

  it("takes the newest Healthy release other than the bad one, and its newest successful sync", () => {
    const d = autoRollbackDecision(
      input({
        history: [entry(1, C), entry(2, A), entry(3, A, { trigger: "selfHeal" }), entry(4, B)],
        healthRecords: [
          {
            revision: C,
            since: "2026-01-01T10:00:00.000Z",
            until: "2026-01-01T10:30:00.000Z",
            ended: "moved",
          },
          {
            revision: A,
            since: "2026-01-01T11:00:00.000Z",
            until: "2026-01-01T11:59:00.000Z",
            ended: "moved",
          },
          { revision: B, since: "2026-01-01T11:59:30.000Z", until: T0, ended: "Degraded" },
        ],
      }),
    );
    assert.equal(d.kind, "rollback");
    if (d.kind === "rollback") assert.deepEqual(d.to, { id: 3, revision: A });
  });
});

describe("the clock of a bad release", () => {
  const now = new Date("2026-01-01T12:01:00.000Z");
  const cases: Array<
    [string, Parameters<typeof nextDegradedStretch>[0], Parameters<typeof nextDegradedStretch>[1], unknown]
  > = [
    [
      "Healthy: none",
      undefined,
      { health: "Healthy", lastSyncedRevision: B, history: [entry(1, B)] },
      undefined,
    ],
    [
      "turning Degraded starts it",
      undefined,
      { health: "Degraded", lastSyncedRevision: B, history: [entry(1, B)] },
      { revision: B, since: now.toISOString(), why: "Degraded" },
    ],
    [
      "staying Degraded keeps its start",
      { revision: B, since: T0, why: "Degraded" },
      {
        health: "Degraded",
        lastSyncedRevision: B,
        history: [entry(1, B), entry(2, B, { trigger: "selfHeal" })],
      },
      { revision: B, since: T0, why: "Degraded" },
    ],
    [
      "a failed sync of a new commit starts it, whatever the health",
      undefined,
      { health: "Healthy", lastSyncedRevision: A, history: [entry(1, A), entry(2, B, { result: "Failed" })] },
      { revision: B, since: now.toISOString(), why: "sync failed" },
    ],
    [
      "a refusal or a failed self-heal is not a release",
      undefined,
      {
        health: "Healthy",
        lastSyncedRevision: A,
        history: [
          entry(1, A),
          entry(2, B, { result: "Refused" }),
          entry(3, A, { trigger: "selfHeal", result: "Failed" }),
        ],
      },
      undefined,
    ],
    [
      "another release that is bad starts anew",
      { revision: B, since: T0, why: "Degraded" },
      { health: "Degraded", lastSyncedRevision: C, history: [entry(1, B), entry(2, C)] },
      { revision: C, since: now.toISOString(), why: "Degraded" },
    ],
  ];
  for (const [name, before, after, want] of cases)
    it(name, () => assert.deepEqual(nextDegradedStretch(before, after, now), want));

  it("a rollback's own failed sync does not make a bad release of the commit it went back to", () => {
    const s = {
      health: "Degraded",
      lastSyncedRevision: B,
      history: [entry(1, A), entry(2, B), entry(3, A, { trigger: "autoRollback", result: "Failed" })],
    };
    assert.deepEqual(badRelease(s), { revision: B, why: "Degraded" });
  });
});

describe("history of a release that changed CRDs", () => {
  it("names the CRDs it created or changed, and only those", () => {
    const resource = (kind: string, group: string, name: string, action: string) => ({
      kind,
      group,
      name,
      namespace: "",
      status: "Synced",
      action,
      message: "",
    });
    const outcome = {
      revision: B,
      phase: "Succeeded",
      message: "",
      startedAt: T0,
      finishedAt: T0,
      writes: 2,
      dryRun: false,
      totals: { created: 1, configured: 1, unchanged: 1, pruned: 0, failed: 0, skipped: 0 },
      resources: [
        resource("CustomResourceDefinition", "apiextensions.k8s.io", "widgets.example.com", "created"),
        resource("CustomResourceDefinition", "apiextensions.k8s.io", "gadgets.example.com", "unchanged"),
        resource("CustomResourceDefinition", "evil.example.com", "fake.example.com", "configured"),
        resource("Deployment", "apps", "web", "configured"),
      ],
    } as unknown as Parameters<typeof historyEntryOf>[2];
    assert.deepEqual(historyEntryOf("push", "alice", outcome).crds, ["widgets.example.com"]);
  });
});
