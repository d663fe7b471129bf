import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatDuration, parseDuration } from "../../../src/config/duration.ts";

describe("parseDuration", () => {
  const valid: Array<[string, number]> = [
    ["250ms", 250],
    ["5s", 5_000],
    ["3m", 180_000],
    ["1h", 3_600_000],
    ["1h30m", 5_400_000],
    ["1h0m0s", 3_600_000],
    ["1.5h", 5_400_000],
    [".5s", 500],
    ["2m30s500ms", 150_500],
    ["0s", 0],
  ];
  for (const [text, ms] of valid) it(`${text} = ${ms} ms`, () => assert.equal(parseDuration(text), ms));

  for (const text of ["", "5", "5d", "5 s", "-5s", "5S", "1h 30m", "ms", "1.s", "5us", "1e3s"]) {
    it(`refuses ${JSON.stringify(text)}`, () => assert.equal(parseDuration(text), undefined));
  }
});

describe("formatDuration", () => {
  const cases: Array<[number, string]> = [
    [0, "0s"],
    [250, "250ms"],
    [5_000, "5s"],
    [180_000, "3m"],
    [5_400_000, "1h30m"],
    [90_061_001, "25h1m1s1ms"],
  ];
  for (const [ms, text] of cases) {
    it(`${ms} ms = ${text}, and back`, () => {
      assert.equal(formatDuration(ms), text);
      assert.equal(parseDuration(text), ms);
    });
  }
  it("refuses negative values", () => assert.throws(() => formatDuration(-1), RangeError));
});
