import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CONCURRENT_PASSES_VARIABLE,
  concurrentPassesFromEnv,
  DEFAULT_CONCURRENT_PASSES,
  PassSlots,
} from "../../src/reconciler/pass-slots.ts";
import { sleep } from "../../src/util/sleep.ts";

/** Runs `n` passes of `ms` each through `slots`; returns the most that ran at once. */
async function passes(slots: PassSlots, n: number, ms: number): Promise<number> {
  let now = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      const release = await slots.acquire();
      now++;
      most = Math.max(most, now);
      await sleep(ms);
      now--;
      release();
    }),
  );
  return most;
}

describe("PassSlots: how many environment passes run at once", () => {
  it("runs at most `limit` passes at once, and every pass runs", async () => {
    const slots = new PassSlots(3);
    assert.equal(await passes(slots, 10, 5), 3);
    assert.equal(slots.active, 0);
    assert.equal(slots.waiting, 0);
  });

  it("lets the next pass in when one has held its slot past the hold time (a slow pass keeps no one waiting)", async () => {
    const slots = new PassSlots(1, 20);
    await slots.acquire(); // never released: a pass waiting on a rollout
    const started = Date.now();
    // (The hold timer does not keep a process alive; this sleep keeps the test's.)
    const [release] = await Promise.all([slots.acquire(), sleep(30)]);
    assert.ok(Date.now() - started >= 15, "the second pass waited for the hold time");
    release();
    release(); // twice: no effect
    assert.equal(slots.active, 0);
  });

  it("a waiting pass whose environment stops gives up its place", async () => {
    const slots = new PassSlots(1);
    const first = await slots.acquire();
    const stop = new AbortController();
    const waiting = slots.acquire(stop.signal);
    assert.equal(slots.waiting, 1);
    stop.abort();
    (await waiting)(); // a release that does nothing
    assert.equal(slots.waiting, 0);
    first();
    assert.equal(slots.active, 0);
  });

  it("after a burst of passes, once none has run for a while, runs what follows a burst once", async () => {
    let ran = 0;
    const slots = new PassSlots(4, 10_000, { minPasses: 12, delayMs: 20, run: () => ran++ });
    await passes(slots, 5, 1); // a few passes: no burst
    await sleep(40);
    assert.equal(ran, 0);
    await passes(slots, 10, 1); // 15 passes since the last burst
    assert.equal(ran, 0, "not before the delay");
    await sleep(40);
    assert.equal(ran, 1);
    await sleep(40);
    assert.equal(ran, 1, "once per burst");
  });

  it("a pass that starts within the delay postpones it", async () => {
    let ran = 0;
    const slots = new PassSlots(4, 10_000, { minPasses: 2, delayMs: 40, run: () => ran++ });
    await passes(slots, 3, 1);
    await sleep(20);
    const release = await slots.acquire();
    await sleep(40);
    assert.equal(ran, 0, "a pass is running");
    release();
    await sleep(60);
    assert.equal(ran, 1);
  });

  it("reads the limit from the operator's environment and names the variable when it is wrong", () => {
    assert.equal(concurrentPassesFromEnv({}), DEFAULT_CONCURRENT_PASSES);
    assert.equal(concurrentPassesFromEnv({ [CONCURRENT_PASSES_VARIABLE]: "3" }), 3);
    assert.throws(
      () => concurrentPassesFromEnv({ [CONCURRENT_PASSES_VARIABLE]: "0" }),
      /SYNCWARD_CONCURRENT_PASSES.*"0"/,
    );
    assert.throws(
      () => concurrentPassesFromEnv({ [CONCURRENT_PASSES_VARIABLE]: "many" }),
      /SYNCWARD_CONCURRENT_PASSES/,
    );
  });
});
