import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_RESYNC_MS, resyncIntervalMs } from "../../../src/reconciler/resync.ts";

describe("the hard-resync interval", () => {
  const cases: Array<[string | undefined, number]> = [
    [undefined, DEFAULT_RESYNC_MS],
    ["", DEFAULT_RESYNC_MS],
    ["24h", 86_400_000],
    ["90m", 5_400_000],
    ["1h30m", 5_400_000],
    ["2s", 2_000],
  ];
  for (const [text, ms] of cases)
    it(`reads ${JSON.stringify(text)} as ${ms} ms`, () => {
      assert.equal(resyncIntervalMs({ SYNCWARD_RESYNC_INTERVAL: text }), ms);
    });

  for (const bad of ["24", "a day", "0s", "-1h"])
    it(`refuses ${JSON.stringify(bad)}, naming the variable`, () => {
      assert.throws(() => resyncIntervalMs({ SYNCWARD_RESYNC_INTERVAL: bad }), /SYNCWARD_RESYNC_INTERVAL: "/);
    });
});
