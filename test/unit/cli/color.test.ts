import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { colorEnabled, colorizeDiff } from "../../../src/cli/color.ts";

describe("colour", () => {
  const table: Array<[boolean, NodeJS.ProcessEnv, boolean]> = [
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, true],
    [false, { FORCE_COLOR: "1" }, true],
    [true, { FORCE_COLOR: "0" }, false],
    [false, { FORCE_COLOR: "1", NO_COLOR: "1" }, false],
  ];
  for (const [isTTY, env, expected] of table) {
    it(`tty=${isTTY} ${JSON.stringify(env)} -> ${expected}`, () => {
      assert.equal(colorEnabled({ isTTY }, env), expected);
    });
  }

  it("colours removals red and additions green, headers bold", () => {
    const out = colorizeDiff("--- live\n+++ desired\n@@ -1 +1 @@\n-a\n+b\n c");
    assert.deepEqual(out.split("\n"), [
      "\u001b[1m--- live\u001b[0m",
      "\u001b[1m+++ desired\u001b[0m",
      "\u001b[36m@@ -1 +1 @@\u001b[0m",
      "\u001b[31m-a\u001b[0m",
      "\u001b[32m+b\u001b[0m",
      " c",
    ]);
  });
});
