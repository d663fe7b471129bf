import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { admit, type QueuedPreview, startable } from "../../../src/reconciler/preview-queue.ts";

const LIMITS = { maxPerRepository: 2, maxPerInstallation: 3 };
let clock = 0;
const p = (
  repository: string,
  number: number,
  phase: QueuedPreview["phase"],
  installation = 1,
): QueuedPreview => ({
  key: `${repository}#${number}:dev`,
  repository,
  installation,
  phase,
  requestedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString(),
});

describe("admit", () => {
  it("starts a preview under both limits", () => {
    assert.deepEqual(admit([p("a/x", 1, "live")], p("a/x", 2, "queued"), LIMITS), { start: true });
  });

  it("queues the third of one repository, saying why and where", () => {
    const all = [p("a/x", 1, "live"), p("a/x", 2, "live")];
    const decision = admit(all, p("a/x", 3, "queued"), LIMITS);
    assert.deepEqual(decision, {
      start: false,
      position: 1,
      reason: "this repository has 2 live preview(s), its limit is 2",
    });
  });

  it("queues beyond the installation's limit across repositories", () => {
    const all = [p("a/x", 1, "live"), p("a/y", 1, "live"), p("a/z", 1, "live")];
    const decision = admit(all, p("a/w", 1, "queued"), LIMITS);
    assert.equal(decision.start, false);
    assert.match(decision.start ? "" : decision.reason, /installation has 3 live/);
  });

  it("other installations do not count", () => {
    const all = [p("b/x", 1, "live", 2), p("b/y", 1, "live", 2), p("b/z", 1, "live", 2)];
    assert.deepEqual(admit(all, p("a/x", 1, "queued"), LIMITS), { start: true });
  });

  it("a newcomer never jumps an earlier waiter of its repository", () => {
    const waiting = p("a/x", 3, "queued");
    const all = [p("a/x", 1, "live"), waiting];
    assert.deepEqual(admit(all, p("a/x", 4, "queued"), { ...LIMITS, maxPerRepository: 2 }), {
      start: false,
      position: 2,
      reason: "this repository has 1 live preview(s), its limit is 2",
    });
  });

  it("a waiter its own repository holds back does not hold back another repository", () => {
    const all = [p("a/x", 1, "live"), p("a/x", 2, "live"), p("a/x", 3, "queued")];
    assert.deepEqual(admit(all, p("a/y", 1, "queued"), LIMITS), { start: true });
  });
});

describe("startable: when one ends", () => {
  it("starts the queue in order, up to the limits", () => {
    const first = p("a/x", 3, "queued");
    const second = p("a/x", 4, "queued");
    const other = p("a/y", 1, "queued");
    const all = [p("a/x", 1, "live"), first, second, other];
    assert.deepEqual(
      startable(all, LIMITS).map((q) => q.key),
      [first.key, other.key],
    );
  });

  it("starts nothing while everything is full", () => {
    const all = [p("a/x", 1, "live"), p("a/x", 2, "live"), p("a/x", 3, "queued")];
    assert.deepEqual(startable(all, LIMITS), []);
  });
});
