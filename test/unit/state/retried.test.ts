import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addRetried, type RetriedAttempts } from "../../../src/state/retried.ts";

const attempt = (n: number) => ({
  attempt: n,
  startedAt: "2026-01-01T00:00:00Z",
  finishedAt: "2026-01-01T00:00:01Z",
  revision: "a".repeat(40),
  message: `503 on attempt ${n}`,
});

function retriedAfter(failures: number): RetriedAttempts {
  let log: RetriedAttempts = { retried: [], omitted: 0 };
  for (let n = 1; n <= failures; n++) log = addRetried(log, attempt(n));
  return log;
}

describe("retried attempts of one sync", () => {
  it("keeps every attempt up to 13", () => {
    const log = retriedAfter(13);
    assert.deepEqual(
      log.retried.map((a) => a.attempt),
      Array.from({ length: 13 }, (_, i) => i + 1),
    );
    assert.equal(log.omitted, 0);
  });

  it("keeps the first 3 and the last 10 of a sync retried a thousand times, and counts the rest", () => {
    const log = retriedAfter(1000);
    assert.deepEqual(
      log.retried.map((a) => a.attempt),
      [1, 2, 3, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000],
    );
    assert.equal(log.omitted, 987);
    assert.equal(log.omitted + log.retried.length, 1000, "every attempt is kept or counted");
  });
});
