// The statistics every benchmark reports: nearest-rank percentiles, so a reported p99 is always a
// sample that was measured, never an interpolation.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { median, medianAndP99, percentile } from "../../../bench/support.ts";

describe("bench statistics", () => {
  it("p99 of 50 samples is the largest sample, p90 the 45th smallest", () => {
    const samples = Array.from({ length: 50 }, (_, i) => 50 - i);
    assert.equal(percentile(samples, 99), 50);
    assert.equal(percentile(samples, 90), 45);
  });

  it("the median of an even count is the lower middle sample; of nothing, NaN", () => {
    assert.equal(median([4, 1, 3, 2]), 2);
    assert.equal(median([7]), 7);
    assert.ok(Number.isNaN(median([])));
  });

  it("a latency is reported as a median and a p99 row, each judged against its own target", () => {
    const [m, p99] = medianAndP99("heal", [100, 200, 3500], {
      median: ["< 1 s", 1000],
      p99: ["< 3 s", 3000],
    });
    assert.deepEqual(
      [m?.name, m?.syncward, m?.met, p99?.name, p99?.syncward, p99?.met],
      ["heal, median", 200, true, "heal, p99", 3500, false],
    );
  });
});
