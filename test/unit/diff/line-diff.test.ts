import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { diffLines, unifiedDiff } from "../../../src/engine/diff/index.ts";
import { DiffTooLargeError } from "../../../src/engine/diff/line-diff.ts";

/** Applies a unified diff to text (strictly: context and removed lines must match). */
function applyPatch(text: string, patch: string): string {
  const old = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const out: string[] = [];
  let pos = 0;
  const lines = patch.replace(/\n$/, "").split("\n").slice(2);
  for (let i = 0; i < lines.length; i++) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(lines[i] as string);
    assert.ok(m, `hunk header expected: ${lines[i]}`);
    const start = Number(m[1]);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    const from = count === 0 ? start : start - 1;
    while (pos < from) out.push(old[pos++] as string);
    while (i + 1 < lines.length && !(lines[i + 1] as string).startsWith("@@")) {
      const line = lines[++i] as string;
      const body = line.slice(1);
      if (line[0] === "+") out.push(body);
      else {
        assert.equal(old[pos], body, `line ${pos + 1} should be ${JSON.stringify(body)}`);
        pos++;
        if (line[0] === " ") out.push(body);
      }
    }
  }
  while (pos < old.length) out.push(old[pos++] as string);
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

const text = (...lines: string[]) => lines.map((l) => `${l}\n`).join("");

describe("diffLines", () => {
  const cases: Array<[string, string[], string[], string]> = [
    ["equal", ["a", "b"], ["a", "b"], "  a|  b"],
    ["insert in the middle", ["a", "c"], ["a", "b", "c"], "  a|+ b|  c"],
    ["delete", ["a", "b", "c"], ["a", "c"], "  a|- b|  c"],
    ["replace: deletion before insertion", ["a", "x", "c"], ["a", "y", "c"], "  a|- x|+ y|  c"],
    ["from empty", [], ["a"], "+ a"],
    ["to empty", ["a"], [], "- a"],
    ["shortest script", ["a", "b", "c", "a", "b", "b", "a"], ["c", "b", "a", "b", "a", "c"], ""],
  ];
  for (const [name, a, b, expected] of cases) {
    it(name, () => {
      const edits = diffLines(a, b);
      // Every script rebuilds both sides.
      assert.deepEqual(
        edits.filter((e) => e.op !== "+").map((e) => e.line),
        a,
      );
      assert.deepEqual(
        edits.filter((e) => e.op !== "-").map((e) => e.line),
        b,
      );
      if (expected) assert.equal(edits.map((e) => `${e.op} ${e.line}`).join("|"), expected);
      else assert.equal(edits.filter((e) => e.op !== " ").length, 5, "Myers' example needs D = 5");
    });
  }
});

describe("unifiedDiff", () => {
  it("is empty for equal texts", () => {
    assert.equal(unifiedDiff(text("a"), text("a"), "old", "new"), "");
  });

  it("prints headers and one hunk with 3 lines of context", () => {
    const a = text("1", "2", "3", "4", "5", "6", "7", "8", "9");
    const b = text("1", "2", "3", "4", "FIVE", "6", "7", "8", "9");
    assert.equal(
      unifiedDiff(a, b, "live/x", "desired/x"),
      "--- live/x\n+++ desired/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n",
    );
  });

  it("merges changes 6 lines apart into one hunk, splits them 7 apart", () => {
    const base = Array.from({ length: 20 }, (_, i) => `${i + 1}`);
    const six = base.map((l, i) => (i === 2 || i === 9 ? `${l}!` : l));
    const seven = base.map((l, i) => (i === 2 || i === 10 ? `${l}!` : l));
    const hunks = (b: string[]) => unifiedDiff(text(...base), text(...b), "a", "b").match(/^@@/gm)?.length;
    assert.equal(hunks(six), 1);
    assert.equal(hunks(seven), 2);
  });

  it("numbers an empty side like diff -u", () => {
    assert.equal(unifiedDiff("", text("a", "b"), "a", "b"), "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    assert.equal(unifiedDiff(text("a"), "", "a", "b"), "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n");
  });

  it("context can be changed", () => {
    const out = unifiedDiff(text("1", "2", "3"), text("1", "X", "3"), "a", "b", 0);
    assert.equal(out, "--- a\n+++ b\n@@ -2 +2 @@\n-2\n+X\n");
  });

  it("any diff applies back (random texts)", () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let t = 0; t < 300; t++) {
      const a = Array.from({ length: rnd(40) }, () => `l${rnd(6)}`);
      const b = a.filter(() => rnd(5) > 0).flatMap((x) => (rnd(5) === 0 ? [x, `n${rnd(4)}`] : [x]));
      if (rnd(3) === 0) b.unshift("first");
      const [ta, tb] = [text(...a), text(...b)];
      const patch = unifiedDiff(ta, tb, "a", "b");
      assert.equal(patch === "" ? ta : applyPatch(ta, patch), tb);
    }
  });

  it("handles large inputs", () => {
    const a = Array.from({ length: 3000 }, (_, i) => `line ${i}`);
    const b = a.map((l, i) => (i % 100 === 0 ? `${l} changed` : l));
    const start = performance.now();
    const patch = unifiedDiff(text(...a), text(...b), "a", "b");
    assert.ok(performance.now() - start < 2000);
    assert.equal(applyPatch(text(...a), patch), text(...b));
  });
});

describe("unifiedDiff past its ceiling", () => {
  const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}`);

  it("says how many lines changed instead of listing them", () => {
    const a = text(...lines(10, "old"), "same");
    const b = text(...lines(12, "new"), "same");
    assert.equal(
      unifiedDiff(a, b, "live/x", "desired/x", 3, { maxEdits: 5 }),
      "--- live/x\n+++ desired/x\n# diff too large: 22 lines changed\n",
    );
  });

  it("lists a diff at the ceiling in full", () => {
    const a = text("keep", ...lines(3, "old"));
    const b = text("keep", ...lines(2, "new"));
    const patch = unifiedDiff(a, b, "a", "b", 3, { maxEdits: 5 });
    assert.equal(applyPatch(a, patch), b);
  });

  it("finishes 10,000 changed lines with bounded memory", () => {
    const a = text(...lines(10_000, "replicas: 1 # line"));
    const b = text(...lines(10_000, "replicas: 2 # line"));
    const peakBefore = process.resourceUsage().maxRSS;
    const out = unifiedDiff(a, b, "live/x", "desired/x");
    const grewKiB = process.resourceUsage().maxRSS - peakBefore;
    assert.equal(out, "--- live/x\n+++ desired/x\n# diff too large: 20000 lines changed\n");
    // The full Myers trace for this took 1.2 GB; the ceiling keeps it to a few tens of MB.
    assert.ok(grewKiB < 128 * 1024, `peak RSS grew by ${Math.round(grewKiB / 1024)} MB`);
  });

  it("diffLines throws DiffTooLargeError with the count", () => {
    assert.throws(
      () => diffLines(["a", "b", "c"], ["x", "y", "z"], { maxEdits: 2 }),
      (err: Error) => err instanceof DiffTooLargeError && err.changed === 6,
    );
  });
});
