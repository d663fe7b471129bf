import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chainBreak } from "../../../src/github/push-chain.ts";
import type { RecordedPush } from "../../../src/state/types.ts";

const sha = (c: string) => c.repeat(40);
const push = (before: string, after: string, login = "someone"): RecordedPush => ({
  before: sha(before),
  after: sha(after),
  login,
});

describe("the recorded pushes from the pending revision back to the last synced one", () => {
  const cases: Array<{ name: string; pushes: RecordedPush[]; base: string; head: string; breaks?: string }> =
    [
      { name: "one push brought the whole range", pushes: [push("0", "b")], base: "0", head: "b" },
      {
        name: "each push of the range recorded, in any order, beside pushes of other revisions",
        pushes: [push("a", "b"), push("9", "8"), push("0", "a")],
        base: "0",
        head: "b",
      },
      { name: "nothing to account for (the head is the base)", pushes: [], base: "b", head: "b" },
      { name: "no push of the head recorded", pushes: [push("0", "a")], base: "0", head: "b", breaks: "b" },
      { name: "a push between never recorded", pushes: [push("a", "b")], base: "0", head: "b", breaks: "a" },
      {
        name: "a recorded push without where it came from",
        pushes: [{ after: sha("b"), login: "someone" }],
        base: "0",
        head: "b",
        breaks: "b",
      },
      {
        name: "a force push back and forth that loops without reaching the base",
        pushes: [push("a", "b"), push("b", "a")],
        base: "0",
        head: "b",
        breaks: "b",
      },
    ];
  for (const c of cases)
    it(c.name, () => {
      assert.equal(
        chainBreak(c.pushes, sha(c.base), sha(c.head)),
        c.breaks === undefined ? undefined : sha(c.breaks),
      );
    });
});
