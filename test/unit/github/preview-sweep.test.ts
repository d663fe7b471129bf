// The sweep's decision for one recorded preview: what is known to be over ends, what cannot be
// read is kept, and a teardown that stopped half way is taken up again unless one is running.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type SweepAction, type SweepFacts, sweepAction } from "../../../src/github/preview-sweep.ts";

const NOW = Date.parse("2026-12-02T12:00:00Z");
const HOUR = 3_600_000;
const live: SweepFacts = {
  phase: "live",
  pullState: "open",
  templateExists: true,
  lastMovedAt: "2026-12-02T11:00:00Z",
  busy: false,
};

describe("sweepAction", () => {
  const cases: Array<[string, Partial<SweepFacts>, SweepAction]> = [
    ["an open pull request, its template there, no TTL: kept", {}, { action: "keep" }],
    [
      "a closed pull request: torn down",
      { pullState: "closed" },
      { action: "teardown", why: "the pull request closed" },
    ],
    [
      "a closed pull request whose preview waits in the queue: torn down (its record goes)",
      { phase: "queued", pullState: "closed" },
      { action: "teardown", why: "the pull request closed" },
    ],
    ["GitHub could not be asked: kept", { pullState: undefined }, { action: "keep" }],
    [
      "the template left the default branch's config: torn down",
      { templateExists: false },
      { action: "teardown", why: "its template is no longer in `.github/syncward.yml`" },
    ],
    ["the config could not be read: kept", { templateExists: undefined }, { action: "keep" }],
    [
      "the TTL passed since the last push",
      { ttlMs: HOUR / 2 },
      { action: "teardown", why: "its time to live passed since the pull request last moved" },
    ],
    ["the TTL not yet passed", { ttlMs: 2 * HOUR }, { action: "keep" }],
    ["an unreadable last-moved time never expires", { ttlMs: 1, lastMovedAt: "soon" }, { action: "keep" }],
    ["a teardown that stopped half way: taken up again", { phase: "tearingDown" }, { action: "resume" }],
    ["a teardown running now: left to finish", { phase: "tearingDown", busy: true }, { action: "keep" }],
    [
      "a half-done teardown is resumed even when its pull request reopened",
      { phase: "tearingDown", pullState: "open" },
      { action: "resume" },
    ],
  ];
  for (const [name, facts, want] of cases)
    it(name, () => assert.deepEqual(sweepAction({ ...live, ...facts }, NOW), want));
});
