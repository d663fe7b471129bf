// The revision rule of a promotion and the evidence behind it, as tables: what an upstream's health
// records prove about a commit, which commit a downstream takes, and when it should look again.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Contains,
  chooseProven,
  lineOf,
  nextWake,
  proofOf,
  readableSpan,
  type Upstream,
} from "../../../src/reconciler/promotion/evidence.ts";
import type { HealthRecord } from "../../../src/state/health-records.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
const D = "d".repeat(40);
const E = "e".repeat(40);
/**
 * The repository: main was A, B, C, D; a force push made it A, B, E (C and D left it, E's parent is
 * B). Each commit's parent; ancestry follows them.
 */
const PARENTS: Record<string, string> = { [B]: A, [C]: B, [D]: C, [E]: B };
const ancestry: Contains = async (ancestor, descendant) => {
  for (let at: string | undefined = descendant; at; at = PARENTS[at]) if (at === ancestor) return true;
  return false;
};
const NOW = new Date("2026-01-01T12:00:00.000Z");
/** An ISO time `min` minutes before NOW. */
const ago = (min: number) => new Date(NOW.getTime() - min * 60_000).toISOString();
const TEN_MIN = 10 * 60_000;

function upstream(records: HealthRecord[], name = "staging", branch = "main"): Upstream {
  return { name, branch, records, current: records.at(-1)?.revision };
}

describe("promotion evidence", () => {
  it("proves a commit only by a stretch of health long enough, unbroken", () => {
    const cases: Array<[string, HealthRecord[], string, boolean, string]> = [
      [
        "healthy long enough, now",
        [{ revision: A, since: ago(34) }],
        A,
        true,
        "staging: Healthy for 34m at this commit",
      ],
      [
        "healthy, not long enough yet",
        [{ revision: A, since: ago(4) }],
        A,
        false,
        "staging: Healthy for 4m of 10m at this commit",
      ],
      [
        "proven before the upstream moved on",
        [
          { revision: A, since: ago(60), until: ago(20), ended: "moved" },
          { revision: B, since: ago(20) },
        ],
        A,
        true,
        "staging: was Healthy for 40m at this commit before it moved on",
      ],
      [
        "moved on too early",
        [
          { revision: A, since: ago(25), until: ago(20), ended: "moved" },
          { revision: B, since: ago(20) },
        ],
        A,
        false,
        "staging: was Healthy for 5m of 10m at this commit before it moved on",
      ],
      [
        "turned Degraded within the window",
        [{ revision: A, since: ago(30), until: ago(25), ended: "Degraded" }],
        A,
        false,
        "staging: turned Degraded at this commit after 5m Healthy",
      ],
      [
        "turned Degraded after the window: no longer proven",
        [{ revision: A, since: ago(60), until: ago(5), ended: "Degraded" }],
        A,
        false,
        "staging: turned Degraded at this commit after 55m Healthy",
      ],
      [
        "healthy again after a break counts from the break",
        [
          { revision: A, since: ago(60), until: ago(8), ended: "Degraded" },
          { revision: A, since: ago(7) },
        ],
        A,
        false,
        "staging: Healthy for 7m of 10m at this commit",
      ],
      [
        "never ran the commit",
        [{ revision: B, since: ago(30) }],
        A,
        false,
        "staging: has not been Healthy at this commit (it runs bbbbbbb)",
      ],
    ];
    for (const [name, records, revision, proven, text] of cases) {
      const proof = proofOf(upstream(records), revision, TEN_MIN, NOW);
      assert.deepEqual({ proven: proof.proven, text: proof.text }, { proven, text }, name);
    }
  });

  it("takes the newest commit every upstream proved, else holds", async () => {
    const staging = (records: HealthRecord[]) => upstream(records, "staging");
    const canary = (records: HealthRecord[]) => upstream(records, "canary");
    const cases: Array<[string, Upstream[], string, string | undefined, string[]]> = [
      [
        "the head is proven",
        [staging([{ revision: C, since: ago(15) }])],
        C,
        C,
        ["staging: Healthy for 15m at this commit"],
      ],
      [
        "the head is newer than what is proven: the proven one",
        [
          staging([
            { revision: A, since: ago(60), until: ago(40), ended: "moved" },
            { revision: B, since: ago(40), until: ago(2), ended: "moved" },
            { revision: C, since: ago(2) },
          ]),
        ],
        C,
        B,
        ["staging: was Healthy for 38m at this commit before it moved on"],
      ],
      [
        "a Degraded newer commit is passed over for an older proven one",
        [
          staging([
            { revision: A, since: ago(60), until: ago(20), ended: "moved" },
            { revision: B, since: ago(20), until: ago(15), ended: "Degraded" },
          ]),
        ],
        B,
        A,
        ["staging: was Healthy for 40m at this commit before it moved on"],
      ],
      [
        "nothing proven: hold, saying what the head waits for",
        [staging([{ revision: C, since: ago(3) }])],
        C,
        undefined,
        ["staging: Healthy for 3m of 10m at this commit"],
      ],
      [
        "two upstreams: both must hold",
        [
          staging([
            { revision: A, since: ago(50), until: ago(30), ended: "moved" },
            { revision: B, since: ago(30) },
          ]),
          canary([
            { revision: A, since: ago(45), until: ago(5), ended: "moved" },
            { revision: B, since: ago(5) },
          ]),
        ],
        B,
        A,
        [
          "staging: was Healthy for 20m at this commit before it moved on",
          "canary: was Healthy for 40m at this commit before it moved on",
        ],
      ],
      [
        "two upstreams, one of them never proved anything",
        [staging([{ revision: B, since: ago(30) }]), canary([])],
        B,
        undefined,
        ["staging: Healthy for 30m at this commit", "canary: has not been Healthy at this commit"],
      ],
    ];
    for (const [name, ups, head, revision, texts] of cases) {
      const choice = await chooseProven(ups, { head, branch: "main" }, ancestry, TEN_MIN, NOW);
      assert.equal(choice.revision, revision, name);
      assert.deepEqual(
        choice.proofs.map((p) => p.text),
        texts,
        name,
      );
    }
  });

  it("takes only a commit on the downstream's branch and after what it runs; a source that cannot tell gives none", async () => {
    const cases: Array<[string, string, string, string | undefined, Contains | undefined, string]> = [
      ["on the branch, after what it runs", C, D, A, ancestry, "ok"],
      ["the branch head itself", D, D, C, ancestry, "ok"],
      ["what it runs already", B, D, B, ancestry, "ok"],
      ["runs nothing yet", B, D, undefined, ancestry, "ok"],
      ["left the branch in a force push", C, E, A, ancestry, "branch"],
      ["another branch's commit", "f".repeat(40), D, A, ancestry, "back"],
      ["older than what it runs", B, D, C, ancestry, "back"],
      ["a source that cannot tell ancestry", C, D, A, undefined, "unknown"],
      ["the head, for a downstream that runs nothing yet: nothing to ask", D, D, undefined, undefined, "ok"],
    ];
    for (const [name, candidate, head, current, contains, line] of cases)
      assert.equal(await lineOf(candidate, head, current, contains), line, name);
  });

  it("never moves a downstream back or off its branch, however the upstream's records are ordered", async () => {
    const staging = (records: HealthRecord[]) => upstream(records, "staging");
    const cases: Array<
      [string, HealthRecord[], string, string | undefined, Contains, string | undefined, string[]]
    > = [
      [
        "the upstream was rolled back to an older commit and proved it: the downstream stays",
        [
          { revision: C, since: ago(60), until: ago(30), ended: "moved" },
          { revision: A, since: ago(30) },
        ],
        D,
        C,
        ancestry,
        C,
        [
          `${A.slice(0, 7)} is proven but does not come after ${C.slice(0, 7)}, which stays until a newer commit is proven (going back is a rollback)`,
        ],
      ],
      [
        "its commit has left the upstream's last ten records: still not back",
        [{ revision: A, since: ago(30) }],
        D,
        C,
        ancestry,
        undefined,
        [
          `${A.slice(0, 7)} is proven but does not come after ${C.slice(0, 7)}, which stays until a newer commit is proven (going back is a rollback)`,
        ],
      ],
      [
        "a proven commit a force push dropped is passed over for an older one on the branch",
        [
          { revision: B, since: ago(60), until: ago(30), ended: "moved" },
          { revision: C, since: ago(30) },
        ],
        E,
        A,
        ancestry,
        B,
        [
          `${C.slice(0, 7)} is proven but is not on main (its history was rewritten, or the commit is another branch's)`,
        ],
      ],
      [
        "a newer commit on the line moves it forward",
        [
          { revision: A, since: ago(60), until: ago(30), ended: "moved" },
          { revision: C, since: ago(30) },
        ],
        D,
        B,
        ancestry,
        C,
        [],
      ],
    ];
    for (const [name, records, head, current, contains, revision, off] of cases) {
      const choice = await chooseProven(
        [staging(records)],
        { head, current, branch: "main" },
        contains,
        TEN_MIN,
        NOW,
      );
      assert.equal(choice.revision, revision, name);
      assert.deepEqual(choice.off, off, name);
    }
  });

  it("wakes exactly when the first open window closes", () => {
    const cases: Array<[string, Upstream[], string | undefined]> = [
      ["one window still open", [upstream([{ revision: A, since: ago(4) }])], "2026-01-01T12:06:00.000Z"],
      ["already proven: nothing to wait for", [upstream([{ revision: A, since: ago(40) }])], undefined],
      [
        "not healthy: nothing to wait for",
        [upstream([{ revision: A, since: ago(9), until: ago(1), ended: "Degraded" }])],
        undefined,
      ],
      [
        "the earliest of two",
        [upstream([{ revision: A, since: ago(2) }]), upstream([{ revision: A, since: ago(5) }], "canary")],
        "2026-01-01T12:05:00.000Z",
      ],
    ];
    for (const [name, ups, at] of cases) assert.equal(nextWake(ups, TEN_MIN, NOW)?.toISOString(), at, name);
  });

  it("reads spans in minutes from a minute up, else seconds", () => {
    assert.deepEqual([59_999, 60_000, 34 * 60_000 + 59_000, 2_500].map(readableSpan), [
      "59s",
      "1m",
      "34m",
      "2s",
    ]);
  });
});
