import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Promotion } from "../../../../src/reconciler/promotion/promotion.ts";
import {
  chosenRevision,
  revisionFromBranch,
  revisionSourceOf,
  trackedRevision,
} from "../../../../src/reconciler/release/choose-revision.ts";

const HEAD = "a".repeat(40);
const NEWER = "b".repeat(40);

describe("which revision an attempt looks for", () => {
  const rows: Array<[string, number, boolean | undefined, boolean | undefined, "operation" | "branch"]> = [
    ["the first attempt takes the operation's revision", 1, false, true, "operation"],
    ["a retry stays on it without retry.refresh", 2, false, false, "operation"],
    ["a retry stays on it when refresh is unset", 3, undefined, undefined, "operation"],
    ["a retry of a revision a person named stays on it, refresh or not", 2, true, true, "operation"],
    ["a retry with retry.refresh looks at the branch's newest", 2, false, true, "branch"],
    ["so does any later retry", 5, undefined, true, "branch"],
  ];
  for (const [name, n, pinned, refresh, want] of rows)
    it(name, () => assert.equal(revisionSourceOf(n, pinned, refresh), want));
});

describe("the revision an attempt syncs", () => {
  const rows: Array<[string, string, boolean, { revision: string; moves: boolean }]> = [
    ["the branch has not moved: the operation's", HEAD, true, { revision: HEAD, moves: false }],
    ["a newer revision the gate let through: it moves", NEWER, true, { revision: NEWER, moves: true }],
    ["a newer revision the gate refused: it stays", NEWER, false, { revision: HEAD, moves: false }],
    ["the same revision, whatever the gate said: it stays", HEAD, false, { revision: HEAD, moves: false }],
  ];
  for (const [name, newest, allowed, want] of rows)
    it(name, () => assert.deepEqual(chosenRevision(HEAD, newest, allowed), want));
});

describe("the revision automated syncs follow", () => {
  const PINNED = "c".repeat(40);
  const rows: Array<[string, string, { revision: string } | undefined, string]> = [
    ["not pinned: the branch head", NEWER, undefined, NEWER],
    ["pinned: the pin, though the branch moved on", NEWER, { revision: PINNED }, PINNED],
    ["pinned at the branch head: the same revision", PINNED, { revision: PINNED }, PINNED],
  ];
  for (const [name, head, pin, want] of rows) it(name, () => assert.equal(trackedRevision(head, pin), want));
});

describe("what the environment takes from its branch (the pass, a request naming none, a refreshing retry)", () => {
  const PINNED = "c".repeat(40);
  const PROVEN = "d".repeat(40);
  /** A promotion whose rule takes `proven` (none: it holds, saying why). */
  const promotion = (proven?: string) =>
    ({
      target: async () => (proven ? { revision: proven } : { waiting: "staging: Healthy for 4s of 10s" }),
    }) as unknown as Promotion;
  const unread = async (): Promise<string> => {
    throw new Error("the branch is not read while pinned");
  };
  const rows: Array<
    [string, Promotion | undefined, () => Promise<string>, { pin?: { revision: string } }, object]
  > = [
    ["the branch head", undefined, async () => NEWER, {}, { revision: NEWER }],
    [
      "pinned: the pin, without reading the branch",
      promotion(PROVEN),
      unread,
      { pin: { revision: PINNED } },
      { revision: PINNED },
    ],
    [
      "promoted: the newest commit its upstreams proved",
      promotion(PROVEN),
      async () => NEWER,
      {},
      { revision: PROVEN },
    ],
    [
      "promoted, none proven: nothing, and why",
      promotion(),
      async () => NEWER,
      {},
      { waiting: "staging: Healthy for 4s of 10s" },
    ],
  ];
  for (const [name, p, head, state, want] of rows)
    it(name, async () =>
      assert.deepEqual(
        await revisionFromBranch(p, head, state as Parameters<typeof revisionFromBranch>[2]),
        want,
      ),
    );
});
