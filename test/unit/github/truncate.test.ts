import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { byteLength, prefixByBytes, suffixByBytes, truncateBytes } from "../../../src/github/truncate.ts";

/** No lone surrogates (String.prototype.isWellFormed is ES2024, beyond this project's lib). */
function isWellFormed(s: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

const MARKER = /(?:\n\n)?… truncated (\d+) bytes …\n/;

/** Invariants every truncation must keep. */
function assertSound(text: string, max: number, tail: string, out: string) {
  assert.ok(byteLength(out) <= max, `${byteLength(out)} bytes > ${max}`);
  assert.ok(isWellFormed(out), `split a surrogate pair: ${JSON.stringify(out)}`);
  assert.equal(Buffer.from(out, "utf8").toString("utf8"), out, "round-trips through UTF-8");
  if (byteLength(text) <= max) {
    assert.equal(out, text);
    return;
  }
  const m = MARKER.exec(out);
  if (m === null) {
    // Only when not even the marker fits: a plain prefix.
    assert.ok(text.startsWith(out));
    return;
  }
  const head = out.slice(0, m.index);
  assert.ok(text.startsWith(head), "the kept part is a prefix of the text");
  const after = out.slice(m.index + m[0].length);
  assert.ok(tail.endsWith(after), `after the marker comes the tail, or its end: ${JSON.stringify(after)}`);
}

describe("truncateBytes", () => {
  it("returns a text that fits unchanged", () => {
    assert.equal(truncateBytes("hello", 5), "hello");
    assert.equal(truncateBytes("", 0), "");
    assert.equal(truncateBytes("日本", 6, "TAIL"), "日本");
  });

  it("cuts ASCII exactly and counts the dropped bytes", () => {
    const text = "x".repeat(1000);
    const out = truncateBytes(text, 100);
    assert.ok(byteLength(out) <= 100);
    const m = MARKER.exec(out)!;
    const head = out.slice(0, m.index);
    assert.equal(Number(m[1]), 1000 - head.length);
    assert.equal(out, `${head}\n\n… truncated ${1000 - head.length} bytes …\n`);
    // Sized for the worst case: at most a digit or two of slack.
    assert.ok(byteLength(out) >= 98, `wasted room: ${byteLength(out)}`);
  });

  it("counts bytes, not UTF-16 units: 65535 CJK characters do not fit in 65535 bytes", () => {
    const text = "漢".repeat(65535);
    assert.equal(text.length, 65535);
    const out = truncateBytes(text);
    assert.ok(byteLength(out) <= 65535);
    assert.ok(out.length < 22000);
  });

  for (const [name, unit] of [
    ["2-byte (é)", "é"],
    ["3-byte CJK (漢)", "漢"],
    ["4-byte emoji (😀, a surrogate pair)", "😀"],
    ["ZWJ emoji sequence parts", "👩‍💻"],
  ] as const) {
    it(`never splits a ${name} character at any boundary`, () => {
      const text = `ab${unit.repeat(40)}`;
      for (let max = 0; max <= byteLength(text) + 2; max++) {
        assertSound(text, max, "", truncateBytes(text, max));
        assertSound(text, max, "END", truncateBytes(text, max, "END"));
      }
    });
  }

  it("keeps a tail that is the end of the text exactly once", () => {
    const tail = "\n---\n**Totals:** 3 failed\n**Errors:** boom";
    const text = `${"line of diff\n".repeat(500)}${tail}`;
    const out = truncateBytes(text, 1000, tail);
    assert.ok(byteLength(out) <= 1000);
    assert.ok(out.endsWith(tail));
    assert.equal(out.split("**Totals:**").length, 2, "the tail appears once");
    const m = MARKER.exec(out)!;
    const head = out.slice(0, m.index);
    assert.equal(
      Number(m[1]),
      byteLength(text) - byteLength(tail) - byteLength(head),
      "N counts the dropped body",
    );
    // And a text that fits keeps its tail where it was.
    assert.equal(truncateBytes(`short${tail}`, 1000, tail), `short${tail}`);
  });

  it("appends a tail that is not part of the text", () => {
    const out = truncateBytes("y".repeat(500), 120, "[tail]");
    assert.ok(out.endsWith("…\n[tail]"));
    assert.ok(byteLength(out) <= 120);
  });

  it("keeps the end of a tail that does not fit on its own", () => {
    const tail = `errors: ${"é".repeat(100)} LAST`;
    const out = truncateBytes("z".repeat(500), 80, tail);
    assert.ok(byteLength(out) <= 80);
    assert.ok(out.endsWith(" LAST"));
    assert.match(out, /^… truncated \d+ bytes …\n/);
    assert.ok(isWellFormed(out));
  });

  it("falls back to a plain cut when not even the marker fits", () => {
    assert.equal(truncateBytes("abcdefghij".repeat(10), 8), "abcdefgh");
    assert.equal(truncateBytes("😀😀😀", 5), "😀");
    assert.equal(truncateBytes("😀😀😀", 3), "");
  });

  it("holds its invariants on random mixed text", () => {
    const alphabet = ["a", "Z", " ", "\n", "é", "ß", "漢", "字", "😀", "🚀", "\u{1F469}\u200D\u{1F4BB}", "|"];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: rand(80) }, () => alphabet[rand(alphabet.length)]).join("");
      const tail = Array.from({ length: rand(6) }, () => alphabet[rand(alphabet.length)]).join("");
      const max = rand(byteLength(text) + 40);
      assertSound(text, max, tail, truncateBytes(text, max, tail));
      assertSound(text + tail, max, tail, truncateBytes(text + tail, max, tail));
    }
  });

  it("refuses a negative or fractional limit", () => {
    assert.throws(() => truncateBytes("x", -1), RangeError);
    assert.throws(() => truncateBytes("x", 1.5), RangeError);
  });
});

describe("prefixByBytes / suffixByBytes", () => {
  const cases: Array<[string, number, string, string]> = [
    ["abc", 2, "ab", "bc"],
    ["a😀b", 4, "a", "b"],
    ["a😀b", 5, "a😀", "😀b"],
    ["漢字", 5, "漢", "字"],
    ["漢字", 6, "漢字", "漢字"],
    ["é", 1, "", ""],
    ["", 3, "", ""],
  ];
  for (const [text, budget, prefix, suffix] of cases) {
    it(`${JSON.stringify(text)} in ${budget} bytes`, () => {
      assert.equal(prefixByBytes(text, budget), prefix);
      assert.equal(suffixByBytes(text, budget), suffix);
    });
  }

  it("counts a lone surrogate as the 3 bytes of U+FFFD, as the encoder does", () => {
    assert.equal(byteLength("\uD800"), 3);
    assert.equal(prefixByBytes("\uD800x", 3), "\uD800");
  });
});
