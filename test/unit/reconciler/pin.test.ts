import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  pinEndApprovalsRefusal,
  pinNotAfterRefusal,
  pinnedLine,
  pinnedRefusal,
  pinnedRenderRefusal,
  pinnedWriteRefusal,
  pinOf,
  rollbackNote,
  rollbackTarget,
  rollbackTargetOf,
  rolledBackFrom,
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
      const got = rollbackTarget(rowsOf, current, "dev", id === undefined ? undefined : { historyId: id });
      if (typeof want === "number") assert.equal("entry" in got && got.entry.id, want);
      else assert.match("error" in got ? got.error : "", want);
    });
});

describe("a rollback naming a commit", () => {
  const A2 = `aaaaaaa${"1".repeat(33)}`;
  const history: Row[] = [h(1, A), h(2, B), h(3, A, "Succeeded", "selfHeal"), h(4, C, "Failed"), h(5, C)];
  const rows: Array<[string, Row[], string, number | RegExp]> = [
    ["a prefix takes the newest successful entry of that commit", history, "aaaaaaa", 3],
    ["the whole sha, in capitals", history, B.toUpperCase(), 2],
    ["a failed entry of it is passed over for a successful one", history, "ccccccc", 5],
    [
      "a commit no entry deployed: refused, pointing at app history",
      history,
      "ddddddd",
      /^dev has no successful sync of commit ddddddd in its history \(`syncward app history dev` lists them\)$/,
    ],
    [
      "a commit that only failed: refused",
      [h(1, A), h(2, C, "Failed")],
      "ccccccc",
      /no successful sync of commit ccccccc/,
    ],
    [
      "a prefix of two deployed commits: refused as ambiguous",
      [h(1, A), h(2, A2)],
      "aaaaaaa",
      /^commit aaaaaaa is ambiguous in the history of dev \(aaaaaaa, aaaaaaa\); give more of it$/,
    ],
    ["more of it picks one", [h(1, A), h(2, A2)], "aaaaaaa1", 2],
  ];
  for (const [name, rowsOf, commit, want] of rows)
    it(name, () => {
      const got = rollbackTarget(rowsOf, C, "dev", { commit: commit.toLowerCase() });
      if (typeof want === "number") assert.equal("entry" in got && got.entry.id, want);
      else assert.match("error" in got ? got.error : "", want);
    });
});

describe("what a rollback's argument names", () => {
  const rows: Array<[string, string, object | RegExp]> = [
    ["a whole number is a history id", "12", { historyId: 12 }],
    ["six digits are still an id", "999999", { historyId: 999999 }],
    ["seven digits are a commit (an all-digit sha prefix)", "1234567", { commit: "1234567" }],
    ["a sha prefix, lowercased", "ABCDEF1", { commit: "abcdef1" }],
    ["a whole sha", A, { commit: A }],
    [
      "too short for a commit",
      "abcdef",
      /is neither a history id \(a whole number\) nor a commit \(7 to 40 hex digits\)/,
    ],
    ["zero is no id", "0", /is neither/],
    ["a leading zero is no id", "07", /is neither/],
    ["longer than a sha", "a".repeat(41), /is neither/],
    ["a word", "latest", /is neither/],
    ["a ref", "HEAD~1", /is neither/],
  ];
  for (const [name, text, want] of rows)
    it(name, () => {
      const got = rollbackTargetOf(text);
      if (want instanceof RegExp) assert.match("error" in got ? got.error : "", want);
      else assert.deepEqual(got, want);
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

describe("a pinned revision renders what its entry applied, or nothing", () => {
  const A = "a".repeat(40);
  const pin = { revision: A, historyId: 3, renderDigest: "1".repeat(64) };
  it("the pin carries the digest the entry recorded", () =>
    assert.equal(
      pinOf({ id: 3, revision: A, renderDigest: "1".repeat(64) }, "alice", "").renderDigest,
      "1".repeat(64),
    ));
  const cases: Array<[string, Parameters<typeof pinnedRenderRefusal>, RegExp | undefined]> = [
    ["the same render", [pin, A, "1".repeat(64)], undefined],
    [
      "another render of the pinned commit",
      [pin, A, "2".repeat(64)],
      /^the render of aaaaaaa today is not the one history entry 3 applied \(digest 111111111111, now 222222222222\): .*nothing was written$/,
    ],
    ["another revision (not the pin's to judge)", [pin, "b".repeat(40), "2".repeat(64)], undefined],
    [
      "an entry from before digests were kept",
      [{ ...pin, renderDigest: undefined }, A, "2".repeat(64)],
      undefined,
    ],
    ["no pin", [undefined, A, "2".repeat(64)], undefined],
  ];
  for (const [name, args, want] of cases)
    it(name, () => {
      const got = pinnedRenderRefusal(...args);
      if (want === undefined) assert.equal(got, undefined);
      else assert.match(got ?? "", want);
    });
});

describe("which release a rollback goes back from", () => {
  const pinned = pinOf({ id: 1, revision: A }, "alice", "", new Date(), C);
  const cases: Array<[string, Parameters<typeof rolledBackFrom>, string | undefined]> = [
    ["the release running", [{ lastSyncedRevision: B }], B],
    [
      "a release that failed after it (it may have written half of itself)",
      [{ lastSyncedRevision: A, stuck: { revision: C, reason: "x", since: "" } }],
      C,
    ],
    ["the bad release an automatic rollback names", [{ lastSyncedRevision: A }, C], C],
    ["a second rollback keeps the first one's", [{ lastSyncedRevision: A, pin: pinned }, B], C],
    ["nothing ran", [{}], undefined],
  ];
  for (const [name, args, want] of cases) it(name, () => assert.equal(rolledBackFrom(...args), want));
});

describe("what ends a pin, and what does not", () => {
  const pin = pinOf({ id: 3, revision: A }, "alice", "", new Date("2026-01-01T00:00:00Z"), B);
  const approvals: Array<[string, readonly string[], number | undefined, RegExp | undefined]> = [
    ["one approval where one is needed ends it", ["carol"], 1, undefined],
    ["two where two are needed", ["carol", "dave"], 2, undefined],
    [
      "one where two are needed does not",
      ["carol"],
      2,
      /^refused: dev is pinned at aaaaaaa by alice \(rollback to history 3\), and only approvals of ccccccc given after the pin end it: 1 of 2 counted; nothing was unpinned$/,
    ],
    [
      "none never does, even where the rule in force needs none (a shortcut for the deployed revision)",
      [],
      0,
      /only approvals of ccccccc given after the pin end it: 0 of 1 counted/,
    ],
    [
      "without an approval rule nothing but /unpin does",
      ["carol"],
      undefined,
      /without an approval rule only \/unpin dev ends it; nothing was unpinned$/,
    ],
  ];
  for (const [name, approvers, minimum, want] of approvals)
    it(name, () => {
      const got = pinEndApprovalsRefusal(pin, C, "dev", approvers, minimum);
      if (want) assert.match(got ?? "", want);
      else assert.equal(got, undefined);
    });
  it("the release the rollback went back from is not a fix of it", () =>
    assert.equal(
      pinNotAfterRefusal({ ...pin, from: B }, B, "dev", "main"),
      "refused: dev is pinned at aaaaaaa by alice (rollback to history 3), and bbbbbbb is the release it went back from, so approving it does not end the pin; approve a commit on top of it, or /unpin dev",
    ));
  it("nor is a commit before it", () =>
    assert.match(
      pinNotAfterRefusal({ ...pin, from: B }, C, "dev", "main"),
      /and ccccccc is not a commit of main after bbbbbbb, the release it went back from, so approving/,
    ));
});

describe("what the machine writes while pinned", () => {
  const pin = pinOf({ id: 3, revision: A }, "alice", "");
  it("the pinned revision", () => assert.equal(pinnedWriteRefusal(pin, A, "dev"), undefined));
  it("nothing else: a release begun before the pin stops", () =>
    assert.equal(
      pinnedWriteRefusal(pin, C, "dev"),
      "refused: dev is pinned at aaaaaaa by alice (rollback to history 3), and nothing but aaaaaaa is written while it stands: ccccccc (begun before the pin) was not written",
    ));
});
