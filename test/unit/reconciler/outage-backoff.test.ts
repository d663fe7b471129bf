// The machine's passes wait after passes that failed for want of answers: 1 s, doubling to 60 s.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutageBackoff } from "../../../src/reconciler/outage-backoff.ts";

describe("OutageBackoff", () => {
  it("waits 1 s after one failure, doubling to at most 60 s, and nothing once a pass succeeds", () => {
    let now = 0;
    const b = new OutageBackoff(() => now);
    assert.equal(b.waitMs, 0);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.failed();
      waits.push(b.waitMs);
    }
    assert.deepEqual(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    now += 60_000;
    assert.equal(b.waitMs, 0);
    b.reset();
    b.failed();
    assert.equal(b.waitMs, 1_000);
  });

  it("defers a nudge once while it waits, and runs it when the wait is over", async () => {
    const b = new OutageBackoff();
    b.failed();
    let ran = 0;
    assert.equal(
      b.defer(() => ran++),
      true,
    );
    assert.equal(
      b.defer(() => ran++),
      true,
      "a second nudge coalesces",
    );
    await new Promise((r) => setTimeout(r, 1_100));
    assert.equal(ran, 1);
    assert.equal(
      b.defer(() => ran++),
      false,
      "nothing waits once the time is up",
    );
  });

  it("drops a deferred nudge on reset (the environment stopped)", async () => {
    const b = new OutageBackoff();
    b.failed();
    let ran = 0;
    b.defer(() => ran++);
    b.reset();
    await new Promise((r) => setTimeout(r, 1_100));
    assert.equal(ran, 0);
  });
});
