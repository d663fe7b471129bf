import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  clipChars,
  codeSpan,
  fenced,
  hasInvisible,
  inertText,
  showInvisible,
  tableCell,
} from "../../../src/github/markdown.ts";

describe("codeSpan", () => {
  const cases: Array<[string, string]> = [
    ["dev", "`dev`"],
    ["a`b", "``a`b``"],
    ["``x``", "``` ``x`` ```"],
    ["`", "`` ` ``"],
    ["a\u202eb", "`a\\u{202e}b`"],
    ["zero\u200dwidth", "`zero\\u{200d}width`"],
    ["line\nbreak", "`line\\u{000a}break`"],
  ];
  for (const [input, expected] of cases)
    it(JSON.stringify(input), () => assert.equal(codeSpan(input), expected));

  it("clips to a number of characters, never inside a surrogate pair", () => {
    assert.equal(codeSpan("a".repeat(1000), 10), `\`${"a".repeat(9)}…\``);
    assert.equal(clipChars("😀😀😀", 2), "😀…");
  });
});

describe("invisible characters", () => {
  it("finds bidi overrides, zero-width characters and controls, but not a tab or a space", () => {
    for (const c of ["\u202e", "\u200b", "\u200d", "\u2066", "\u0000", "\u2028", "\ufeff"])
      assert.equal(hasInvisible(`a${c}b`), true, showInvisible(c));
    assert.equal(hasInvisible("a\tb c"), false);
  });
});

describe("fenced", () => {
  it("uses a fence longer than any backtick run in the body", () => {
    assert.equal(fenced("x\n```\n<img>\n```", "diff"), "````diff\nx\n```\n<img>\n```\n````");
    assert.equal(fenced("plain\n\n"), "```\nplain\n```");
  });
});

describe("tableCell", () => {
  const cases: Array<[string, string]> = [
    ["alice", "alice"],
    ["a|b", "a\\|b"],
    ["<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"],
    ["two\nlines", "two lines"],
    ["ping @alice and @acme/ops", "ping `@alice` and `@acme/ops`"],
    ["mail ops@acme.example", "mail ops@acme.example"],
    ["`@alice` in a code span of its own", "\\``@alice`\\` in a code span of its own"],
  ];
  for (const [input, expected] of cases)
    it(`${JSON.stringify(input)}: one inert cell of the row it sits in`, () =>
      assert.equal(tableCell(input), expected));

  it("is bounded", () => assert.equal(tableCell("x".repeat(1000), 5), "xxxx…"));
});

describe("inertText: free text in a reply", () => {
  it("one line: a code span, so markdown, HTML and mentions stay text", () =>
    assert.equal(
      inertText("frozen: <b>release</b> @everyone **now**"),
      "`frozen: <b>release</b> @everyone **now**`",
    ));

  it("several lines (API-server or kustomize output): a fenced block the text cannot close", () =>
    assert.equal(inertText("error:\n```\n@alice\n"), "\n\n````\nerror:\n```\n@alice\n````\n"));
});
