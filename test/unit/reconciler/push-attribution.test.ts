import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attributePass } from "../../../src/reconciler/push-attribution.ts";

const push = { revision: "b".repeat(40), trigger: "push" as const, actor: "alice" };
const poll = { trigger: "poll" as const, actor: "syncward" };

describe("attributePass", () => {
  const cases: Array<[string, Parameters<typeof attributePass>, ReturnType<typeof attributePass>]> = [
    [
      "a poll that takes the pushed commit first is the push's sync",
      [poll, push.revision, "a".repeat(40), push],
      { trigger: "push", actor: "alice" },
    ],
    [
      "so is a watch echo's pass",
      [{ trigger: "selfHeal", actor: "syncward" }, push.revision, undefined, push],
      { trigger: "push", actor: "alice" },
    ],
    [
      "a merge keeps its own trigger",
      [poll, push.revision, undefined, { ...push, trigger: "merge" }],
      { trigger: "merge", actor: "alice" },
    ],
    [
      "a later pass at the synced commit is the machine's again",
      [poll, push.revision, push.revision, push],
      poll,
    ],
    ["a head past the announced commit is not the push's", [poll, "c".repeat(40), push.revision, push], poll],
    ["nothing announced", [poll, push.revision, undefined, undefined], poll],
    [
      "a person's trigger is never rewritten",
      [{ trigger: "comment", actor: "bob" }, push.revision, undefined, push],
      { trigger: "comment", actor: "bob" },
    ],
    [
      "nor the CLI's",
      [{ trigger: "cli", actor: "carol" }, push.revision, undefined, push],
      { trigger: "cli", actor: "carol" },
    ],
  ];
  for (const [name, args, want] of cases) it(name, () => assert.deepEqual(attributePass(...args), want));
});
