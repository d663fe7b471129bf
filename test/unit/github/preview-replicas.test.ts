// Which previews a replica runs a Reconciler for: every live one (its Lease picks the writer),
// none whose record is gone or being torn down, and none a step of its own is deciding on.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ReplicaFacts, replicaActions } from "../../../src/github/preview-replicas.ts";

const none = () => false;

describe("replicaActions", () => {
  const cases: Array<[string, ReplicaFacts, { adopt: string[]; drop: string[] }]> = [
    [
      "a live preview another replica started: run here too",
      { records: [{ key: "a", phase: "live" }], running: [], busy: none },
      { adopt: ["a"], drop: [] },
    ],
    [
      "a live preview already run here: nothing to do",
      { records: [{ key: "a", phase: "live" }], running: ["a"], busy: none },
      { adopt: [], drop: [] },
    ],
    [
      "a queued preview: nobody runs it yet",
      { records: [{ key: "a", phase: "queued" }], running: [], busy: none },
      { adopt: [], drop: [] },
    ],
    [
      "another replica tears it down: let go here",
      { records: [{ key: "a", phase: "tearingDown" }], running: ["a"], busy: none },
      { adopt: [], drop: ["a"] },
    ],
    [
      "its record is gone: let go here",
      { records: [], running: ["a"], busy: none },
      { adopt: [], drop: ["a"] },
    ],
    [
      "a step here is on it (starting, tearing down): left to that step",
      {
        records: [{ key: "a", phase: "live" }],
        running: ["b"],
        busy: () => true,
      },
      { adopt: [], drop: [] },
    ],
  ];
  for (const [name, facts, expected] of cases)
    it(name, () => assert.deepEqual(replicaActions(facts), expected));
});
