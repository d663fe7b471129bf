import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  pinnedLine,
  pinnedRefusal,
  pinOf,
  rollbackNote,
  rollbackTarget,
  unpinMessage,
} from "../../../src/reconciler/pin.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);
type Row = Pick<HistoryEntry, "id" | "revision" | "result" | "trigger">;
const h = (
  id: number,
  revision: string,
  result: Row["result"] = "Succeeded",
  trigger: Row["trigger"] = "push",
) => ({
  id,
  revision,
  result,
  trigger,
});

describe("which history entry a rollback re-deploys", () => {
  const history: Row[] = [h(1, A), h(2, B, "Failed"), h(3, C), h(4, C, "Succeeded", "selfHeal")];
  const rows: Array<[string, Row[], string | undefined, number | undefined, number | RegExp]> = [
    ["no id: the newest success of another revision (a failed one passed over)", history, C, undefined, 1],
    ["the newest of several, not the oldest", [h(1, A), h(2, B), h(3, C)], C, undefined, 2],
    [
      "no id and nothing else deployed: refused, pointing at app history",
      [h(1, C)],
      C,
      undefined,
      /no earlier successful sync.*app history dev/,
    ],
    [
      "an unpin deployed nothing: passed over",
      [h(1, A), h(2, B, "Succeeded", "unpin"), h(3, C)],
      C,
      undefined,
      1,
    ],
    ["a named id that succeeded", history, C, 3, 3],
    ["a named id that failed: refused", history, C, 2, /entry 2 of dev deployed nothing \(Failed, push\)/],
    ["a named id that is not in history: refused", history, C, 9, /dev has no history entry 9/],
    ["an empty history: refused", [], undefined, undefined, /no earlier successful sync/],
  ];
  for (const [name, rowsOf, current, id, want] of rows)
    it(name, () => {
      const got = rollbackTarget(rowsOf, current, "dev", id);
      if (typeof want === "number") assert.equal("entry" in got && got.entry.id, want);
      else assert.match("error" in got ? got.error : "", want);
    });
});

describe("a pinned environment and a sync naming a revision", () => {
  const pin = pinOf({ id: 1, revision: A }, "alice", "bad release", new Date("2026-01-01T00:00:00Z"));
  const rows: Array<[string, typeof pin | undefined, string, RegExp | undefined]> = [
    ["not pinned: it runs", undefined, B, undefined],
    ["the pinned revision: it runs", pin, A, undefined],
    [
      "another revision: refused, saying how to unpin",
      pin,
      B,
      /pinned at aaaaaaa by alice.*`syncward app unpin dev`/,
    ],
  ];
  for (const [name, p, revision, want] of rows)
    it(name, () => {
      const got = pinnedRefusal(p, revision, "dev");
      if (want) assert.match(got ?? "", want);
      else assert.equal(got, undefined);
    });
});

describe("what history and app get say", () => {
  const pin = pinOf({ id: 4, revision: A }, "alice", "bad release", new Date("2026-01-01T00:00:00Z"));
  it("the rollback names the entry, the revision, who and why", () =>
    assert.equal(rollbackNote(pin), "rollback to history 4 (aaaaaaa) by alice, pinned (bad release)"));
  it("the unpin names what was pinned, by which rollback, and what happens next", () =>
    assert.match(
      unpinMessage(pin, "bob", "main"),
      /^unpinned aaaaaaa \(pinned by alice at 2026-01-01T00:00:00.000Z, rollback to history 4\) by bob; the next sync takes the head of main$/,
    ));
  it("app get says how to resume", () =>
    assert.equal(
      pinnedLine(pin, "dev"),
      "aaaaaaa by alice at 2026-01-01T00:00:00.000Z: `syncward app unpin dev` resumes",
    ));
});
