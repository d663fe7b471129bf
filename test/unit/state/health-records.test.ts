// The health records a state keeps (a promotion's evidence), from what each write leaves.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  HEALTH_RECORDS_KEPT,
  type HealthRecord,
  nextHealthRecords,
} from "../../../src/state/health-records.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const T0 = "2026-01-01T12:00:00.000Z";
const NOW = new Date("2026-01-01T12:05:00.000Z");
const AT = NOW.toISOString();

function entry(revision: string, result: HistoryEntry["result"], writes: number): HistoryEntry {
  return {
    id: 1,
    startedAt: T0,
    finishedAt: T0,
    revision,
    trigger: "push",
    actor: "x",
    result,
    message: "",
    counts: { created: writes, configured: 0, pruned: 0, failed: 0 },
  };
}

describe("health records", () => {
  it("follow the health and the synced commit", () => {
    const open: HealthRecord[] = [{ revision: A, since: T0 }];
    const cases: Array<[string, HealthRecord[], Parameters<typeof nextHealthRecords>[1], HealthRecord[]]> = [
      [
        "a first Healthy sync starts one",
        [],
        { health: "Healthy", lastSyncedRevision: A, history: [entry(A, "Succeeded", 2)] },
        [{ revision: A, since: AT }],
      ],
      [
        "still Healthy at the commit: unchanged",
        open,
        { health: "Healthy", lastSyncedRevision: A, history: [entry(A, "Succeeded", 2)] },
        open,
      ],
      [
        "Degraded at the commit ends it with the health",
        open,
        { health: "Degraded", lastSyncedRevision: A, history: [entry(A, "Succeeded", 2)] },
        [{ revision: A, since: T0, until: AT, ended: "Degraded" }],
      ],
      [
        "another commit synced: moved, and a new one starts",
        open,
        { health: "Healthy", lastSyncedRevision: B, history: [entry(B, "Succeeded", 1)] },
        [
          { revision: A, since: T0, until: AT, ended: "moved" },
          { revision: B, since: AT },
        ],
      ],
      [
        "a failed sync of another commit that wrote something: moved",
        open,
        { health: "Healthy", lastSyncedRevision: A, history: [entry(B, "Failed", 1)] },
        [{ revision: A, since: T0, until: AT, ended: "moved" }],
      ],
      [
        "a refused or write-less attempt at another commit changes nothing",
        open,
        { health: "Healthy", lastSyncedRevision: A, history: [entry(B, "Refused", 0), entry(B, "Error", 0)] },
        open,
      ],
      [
        "an old state, Healthy but without records, starts one now (never earlier)",
        [],
        { health: "Healthy", lastSyncedRevision: A, history: [] },
        [{ revision: A, since: AT }],
      ],
      ["nothing synced: none", [], { health: "Healthy", history: [] }, []],
    ];
    for (const [name, records, after, expected] of cases)
      assert.deepEqual(nextHealthRecords(records, after, NOW), expected, name);
  });

  it("keep the newest ones only", () => {
    const many: HealthRecord[] = Array.from({ length: HEALTH_RECORDS_KEPT }, (_, i) => ({
      revision: String(i).repeat(40).slice(0, 40),
      since: T0,
      ...(i < HEALTH_RECORDS_KEPT - 1 ? { until: T0, ended: "moved" } : {}),
    }));
    const next = nextHealthRecords(many, { health: "Healthy", lastSyncedRevision: B, history: [] }, NOW);
    assert.equal(next.length, HEALTH_RECORDS_KEPT);
    assert.deepEqual(next.at(-1), { revision: B, since: AT });
    assert.equal(next[0]?.revision, many[1]?.revision);
  });
});
