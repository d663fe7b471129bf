import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { outcomeWithoutWork, type SyncOutcome } from "../../../../src/engine/sync.ts";
import type { GateDecision } from "../../../../src/reconciler/gate-decision.ts";
import {
  applyOutcome,
  interruptedMessage,
  type RecordedFacts,
  recordedFacts,
} from "../../../../src/reconciler/release/record.ts";
import type { EnvironmentState } from "../../../../src/state/types.ts";
import { envConfig } from "../../../support/env.ts";

const OLD = "0".repeat(40);
const SHA = "a".repeat(40);
const NOW = new Date("2026-06-01T12:00:00Z");
const env = envConfig("prod", { approval: { users: ["carol"] } });
type Held = GateDecision & { allowed: false };
const freeze: Held = { allowed: false, check: "freeze", reason: "refused: frozen by @alice" };
const badSignature: Held = { allowed: false, check: "signature", reason: "refused: unsigned" };

const before = (): EnvironmentState => ({
  environment: "app.prod",
  syncStatus: "OutOfSync",
  lastSyncedRevision: OLD,
  history: [],
  pendingApprovals: [
    { sha: SHA, by: "carol", at: "2026-06-01T11:00:00Z" },
    { sha: "b".repeat(40), by: "carol", at: "2026-06-01T11:00:00Z" },
  ],
  pendingSync: {
    revision: SHA,
    trigger: "push",
    actor: "bob",
    requestedAt: "2026-06-01T11:00:00Z",
    manual: false,
    prune: true,
  },
  selfHeals: { "apps/v1/Deployment/prod/web": { revision: OLD, times: ["2026-06-01T10:00:00Z"] } },
  lastError: { revision: SHA, message: "render failed", at: "2026-06-01T10:00:00Z" },
  stuck: { revision: OLD, reason: "earlier", since: "2026-06-01T09:00:00Z" },
});

const outcome = (
  phase: SyncOutcome["phase"],
  message = `${phase.toLowerCase()}`,
  over: Partial<SyncOutcome> = {},
) => ({
  ...outcomeWithoutWork(SHA, phase, message),
  ...over,
});

describe("what a release's outcome means", () => {
  const rows: Array<[string, SyncOutcome, { unfetched?: boolean; held?: Held }, boolean, RecordedFacts]> = [
    [
      "a sync that succeeded",
      outcome("Succeeded"),
      {},
      false,
      { ok: true, interrupted: false, stuck: false },
    ],
    [
      "a sync that failed is stuck",
      outcome("Failed"),
      {},
      false,
      { ok: false, interrupted: false, stuck: true },
    ],
    ["a render error is stuck", outcome("Error"), {}, false, { ok: false, interrupted: false, stuck: true }],
    [
      "a guard's refusal is stuck",
      outcome("Refused"),
      {},
      false,
      { ok: false, interrupted: false, stuck: true },
    ],
    [
      "a source that could not be fetched is not stuck",
      outcome("Failed"),
      { unfetched: true },
      false,
      { ok: false, interrupted: false, stuck: false },
    ],
    [
      "stopped by this replica stopping is interrupted, not stuck",
      outcome("Failed"),
      {},
      true,
      { ok: false, interrupted: true, stuck: false },
    ],
    [
      "a success is not interrupted by a later abort",
      outcome("Succeeded"),
      {},
      true,
      { ok: true, interrupted: false, stuck: false },
    ],
    [
      "a retry the gate stopped (a freeze meanwhile) is not stuck",
      outcome("Refused"),
      { held: freeze },
      false,
      { ok: false, interrupted: false, stuck: false },
    ],
    [
      "a bad signature is stuck",
      outcome("Refused"),
      { held: badSignature },
      false,
      { ok: false, interrupted: false, stuck: true },
    ],
  ];
  for (const [name, o, r, aborted, want] of rows)
    it(name, () => assert.deepEqual(recordedFacts(o, { unfetched: false, ...r }, aborted), want));
});

describe("the state after a release", () => {
  it("a success: synced at the revision, its approvals and wait spent, the render and rules recorded", () => {
    const s = before();
    const digest = {
      digest: "sha256:render",
      count: 1,
      objects: { "apps/v1/Deployment/prod/web": "0123456789ab" },
    };
    applyOutcome(
      s,
      outcome("Succeeded", "1 created", { hooksDigest: "hooks" }),
      { ok: true, interrupted: false, stuck: false },
      env,
      digest,
      NOW,
    );
    assert.equal(s.lastSyncedRevision, SHA);
    assert.equal(s.syncStatus, "Synced");
    assert.equal(s.hooksDigest, "hooks");
    assert.equal(s.stuck, undefined);
    assert.equal(s.lastError, undefined);
    assert.deepEqual(s.selfHeals, {});
    assert.equal(s.pendingSync, undefined);
    assert.deepEqual(
      s.pendingApprovals.map((a) => a.sha),
      ["b".repeat(40)],
    );
    assert.equal(s.deployedRules?.revision, SHA);
    assert.deepEqual(s.deployedRules?.approval, env.approval);
    assert.equal(s.renderedDigest, "sha256:render");
    assert.deepEqual(s.renderedObjects, digest.objects);
  });
  it("a success that left an object OutOfSync says so", () => {
    const s = before();
    const o = outcome("Succeeded", "ok", {
      resources: [
        {
          kind: "Deployment",
          name: "web",
          namespace: "prod",
          status: "OutOfSync",
          action: "skipped",
          message: "m",
        },
      ] as SyncOutcome["resources"],
    });
    applyOutcome(s, o, { ok: true, interrupted: false, stuck: false }, env, undefined, NOW);
    assert.equal(s.syncStatus, "OutOfSync");
    assert.equal(s.lastSyncedRevision, SHA);
  });
  it("a success without a digest keeps the recorded render and hooks", () => {
    const s = { ...before(), renderedDigest: "sha256:old", hooksDigest: "old" };
    applyOutcome(
      s,
      outcome("Succeeded"),
      { ok: true, interrupted: false, stuck: false },
      env,
      undefined,
      NOW,
    );
    assert.equal(s.renderedDigest, "sha256:old");
    assert.equal(s.hooksDigest, "old");
  });
  it("a stuck failure: OutOfSync, stuck at the revision with its message, nothing else moved", () => {
    const s = before();
    applyOutcome(
      s,
      outcome("Failed", "1 object(s) failed: web"),
      { ok: false, interrupted: false, stuck: true },
      env,
      undefined,
      NOW,
    );
    assert.equal(s.syncStatus, "OutOfSync");
    assert.deepEqual(s.stuck, { revision: SHA, reason: "1 object(s) failed: web", since: NOW.toISOString() });
    assert.equal(s.lastSyncedRevision, OLD);
    assert.equal(s.pendingSync?.revision, SHA);
    assert.equal(s.pendingApprovals.length, 2);
  });
  it("a failure that is not stuck leaves the earlier stuck record as it was", () => {
    const s = before();
    applyOutcome(s, outcome("Failed"), { ok: false, interrupted: true, stuck: false }, env, undefined, NOW);
    assert.equal(s.syncStatus, "OutOfSync");
    assert.deepEqual(s.stuck, before().stuck);
  });
});

it("an interrupted release says where it stopped and who carries on", () =>
  assert.equal(
    interruptedMessage("applied wave 1"),
    "stopped at a safe point (this replica is stopping or lost its lease; the next holder syncs again): applied wave 1",
  ));
