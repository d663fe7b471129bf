import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fitParts, fitRows, type Part } from "../../../src/github/budget.ts";
import { commitLink, pullLink, safeUrl } from "../../../src/github/links.ts";
import { byteLength } from "../../../src/github/truncate.ts";
import { checkGfm } from "./gfm-check.ts";

const SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

describe("fitParts", () => {
  const parts = (big: string): Part[] => [
    { order: 0, text: "HEAD", required: true },
    { order: 9, text: "TOTALS", required: true },
    { order: 1, text: big, shrink: (room) => "b".repeat(Math.max(0, room)), pointer: "(rows: see app get)" },
    { order: 2, text: "HISTORY ".repeat(20), pointer: "(history: /history)" },
  ];

  it("keeps everything, in document order, when it fits", () => {
    assert.equal(fitParts(parts("rows"), 1000), `HEAD\n\nrows\n\n${"HISTORY ".repeat(20)}\n\nTOTALS`);
  });

  it("shrinks by priority and keeps the room of later pointers", () => {
    const out = fitParts(parts("r".repeat(5000)), 200);
    assert.ok(byteLength(out) <= 200, `${byteLength(out)}`);
    assert.ok(out.startsWith("HEAD\n\nbbb"));
    assert.ok(out.endsWith("\n\n(history: /history)\n\nTOTALS"), out);
  });

  it("falls back to a pointer when not even a shrunk part fits", () => {
    const out = fitParts(
      [
        { order: 0, text: "HEAD", required: true },
        { order: 1, text: "x".repeat(500), shrink: () => undefined, pointer: "(see app get)" },
      ],
      40,
    );
    assert.equal(out, "HEAD\n\n(see app get)");
  });

  it("cuts only the required parts before the last when they alone are too long", () => {
    const out = fitParts(
      [
        { order: 0, text: "x".repeat(5000), required: true },
        { order: 1, text: "TOTALS", required: true },
      ],
      300,
    );
    assert.ok(byteLength(out) <= 300);
    assert.ok(out.endsWith("TOTALS"));
    assert.match(out, /… truncated \d+ bytes …/);
  });
});

describe("fitRows", () => {
  it("keeps the rows that fit and counts the rest", () => {
    const rows = Array.from({ length: 10 }, (_, i) => `| row ${i} |`);
    const out = fitRows(["| H |", "| --- |"], rows, 60, (n) => `_${n} more_`)!;
    assert.ok(byteLength(out) <= 60, out);
    assert.match(out, /^\| H \|\n\| --- \|\n\| row 0 \|/);
    assert.match(out, /\n\n_\d more_$/);
    assert.equal(
      fitRows(["| H |"], rows, 5, (n) => `${n}`),
      undefined,
    );
  });
});

describe("links", () => {
  const links = { repoUrl: "https://github.com/acme/shop/" };
  it("links commits, with the title when asked and known", () => {
    assert.equal(commitLink(SHA, links), `[\`a1b2c3d\`](https://github.com/acme/shop/commit/${SHA})`);
    assert.equal(commitLink(SHA, undefined), "`a1b2c3d`");
    assert.equal(
      commitLink(
        SHA,
        { ...links, titles: { [SHA]: "fix | <b>@team</b>\nbody" } },
        { withTitle: true, cell: true },
      ),
      `[\`a1b2c3d\`](https://github.com/acme/shop/commit/${SHA}) fix \\| &lt;b&gt;\`@team\`&lt;/b&gt;`,
    );
    assert.equal(commitLink("v1.2.3", links), "`v1.2.3`", "a tag is not a commit URL");
    assert.equal(pullLink(12, links), "[#12](https://github.com/acme/shop/pull/12)");
    assert.equal(
      commitLink(SHA, { ...links, pulls: { [SHA]: 7 } }, { withTitle: true }),
      `[\`a1b2c3d\`](https://github.com/acme/shop/commit/${SHA}) ([#7](https://github.com/acme/shop/pull/7))`,
      "the pull request it was merged from",
    );
  });

  it("accepts only http(s) URLs, escaped so they cannot end the link", () => {
    assert.equal(safeUrl("javascript:alert(1)"), undefined);
    assert.equal(safeUrl("https://x.example/a b"), undefined);
    assert.equal(safeUrl("https://x.example/a)b"), "https://x.example/a%29b");
  });
});

describe("the GFM check finds what GitHub would render wrong", () => {
  const table: Array<[string, string, RegExp]> = [
    ["a row with a cell too many", "| A | B |\n| --- | --- |\n| 1 | 2 | 3 |", /row has 3 cells, header 2/],
    ["an unescaped pipe in a code span", "| A |\n| --- |\n| `a|b` |", /row has 2 cells/],
    ["an unclosed fence", "```\ncode", /unclosed code fence/],
    ["raw HTML", "hello <img src=x>", /raw HTML <img src=x>/],
    ["a live mention", "ping @mallory now", /live mention @mallory/],
    ["a bare SHA", `runs \`${SHA.slice(0, 7)}\``, /commit a1b2c3d is not linked/],
    ["an unclosed code span", "a `b", /unclosed code span/],
  ];
  for (const [name, md, want] of table)
    it(name, () =>
      assert.match(
        checkGfm(md)
          .map((p) => p.problem)
          .join("; "),
        want,
      ),
    );

  it("passes what is right", () => {
    assert.deepEqual(
      checkGfm(
        `| A |\n| --- |\n| \`a\\|b\` [\`a1b2c3d\`](https://x/commit/${SHA}) \`@x\` &lt;b&gt; |\n\n<details><summary>D</summary>\n\n</details>`,
      ),
      [],
    );
  });
});
