import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GateDecision, WritePath } from "../../../../src/reconciler/gate-decision.ts";
import {
  afterGate,
  answeredByGate,
  gatePath,
  stoppedByGate,
  waitOf,
} from "../../../../src/reconciler/release/ask-gate.ts";

const SHA = "a".repeat(40);
type Held = GateDecision & { allowed: false };
const held = (check: Held["check"], reason = `refused: ${check}`): Held => ({
  allowed: false,
  check,
  reason,
});

describe("the path each attempt asks the gate on", () => {
  const rows: Array<[string, number, WritePath, boolean, WritePath]> = [
    ["the automated pass's first attempt", 1, "automated", false, "automated"],
    ["a person's first attempt", 1, "manual", false, "manual"],
    ["a retry on its operation's revision", 2, "automated", false, "retry"],
    ["a person's retry on the revision asked for", 3, "manual", false, "retry"],
    ["a retry that moved to the newest revision", 2, "automated", true, "refresh"],
  ];
  for (const [name, n, requested, moves, want] of rows)
    it(name, () => assert.equal(gatePath(n, requested, moves), want));
});

describe("which paths record a wait for approval", () => {
  it("the automated pass, with its prune flag", () =>
    assert.deepEqual(waitOf("automated", true), { manual: false, prune: true }));
  for (const path of ["manual", "retry", "refresh"] as const)
    it(`not ${path}`, () => assert.equal(waitOf(path, true), undefined));
});

describe("what a gate decision does to the attempt", () => {
  it("allowed: the attempt runs under the rules the gate judged by", () =>
    assert.deepEqual(afterGate({ allowed: true, rules: "stricter" }, SHA), { rules: "stricter" }));
  it("refused: the attempt ends Refused with the gate's reason, before any write", () => {
    const decision = { ...held("freeze", "refused: frozen by @alice"), rules: "any" };
    const after = afterGate(decision, SHA);
    assert.ok("held" in after);
    assert.equal(after.held, decision);
    assert.equal(after.outcome.phase, "Refused");
    assert.equal(after.outcome.message, "refused: frozen by @alice");
    assert.equal(after.outcome.revision, SHA);
    assert.equal(after.outcome.writes, 0);
  });
});

describe("a refusal: answered where it was asked, or recorded", () => {
  const rows: Array<[string, Held | undefined, number, boolean, boolean]> = [
    ["nothing held", undefined, 1, false, false],
    ["a freeze on the first attempt is answered", held("freeze"), 1, true, true],
    ["missing approval on the first attempt is answered", held("approval"), 1, true, true],
    ["a window on the first attempt is answered", held("window"), 1, true, true],
    ["required checks on the first attempt are answered", held("checks"), 1, true, true],
    ["a freeze that stops a retry is recorded, not held as stuck", held("freeze"), 2, false, true],
    ["a bad signature is recorded like a failure", held("signature"), 1, false, false],
  ];
  for (const [name, decision, attempts, answered, byGate] of rows)
    it(name, () => {
      assert.equal(answeredByGate(decision, attempts), answered ? decision : undefined);
      assert.equal(stoppedByGate(decision), byGate);
    });
});
