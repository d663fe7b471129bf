// The user docs speak of the product, not of how it was made: no tracker numbers ("issue 19",
// "(#27)"), no review or session stories. Another project's tracker may be cited by name
// ("argo-cd #9570", "kubernetes/kubernetes#1234").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ROOT, userDocs } from "./doc-files.ts";

/** Projects whose trackers the docs may cite as `<project> #N`. */
const EXTERNAL =
  /(?:argo-?cd|argo|flux2?|fluxcd|kubernetes|kubectl|kustomize|helm|probot|octokit|node(?:js)?|zod|kwok|etcd|go|github)\s*$/i;

const PATTERNS: Array<[RegExp, string]> = [
  [/\bissues? \d+/i, "an issue number"],
  [/\b(?:first|second|third|fourth|adversarial|another) review\b/i, "a review story"],
  [/\breview\b.*\b(?:changed|found)\b/i, "a review story"],
  [/\b(?:this|that|other|earlier|previous|last) sessions?\b|\bsessions'/i, "a session story"],
];

/** What in `line` reads as a lab note, or undefined. */
export function labNote(line: string): string | undefined {
  for (const [pattern, what] of PATTERNS) {
    const m = pattern.exec(line);
    if (m) return `${what}: "${m[0]}"`;
  }
  // A tracker reference: "(#27)", or "see #27", "issue #27", "PR #27". A pull request number quoted
  // in an example of the product's own replies ("opened #1") is not one.
  for (const m of line.matchAll(
    /\(#\d+\)|\b(?:issues?|PR|pull request|see|fixes|fixed in|closes)\s+#\d+/gi,
  )) {
    if (EXTERNAL.test(line.slice(0, m.index))) continue;
    return `a tracker number: "${m[0]}"`;
  }
  return undefined;
}

describe("user docs carry no lab notes", () => {
  it("has none in README.md, docs/, BENCHMARKS.md, RELIABILITY.md", () => {
    const found: string[] = [];
    for (const file of userDocs()) {
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const note = labNote(line);
          if (note) found.push(`${file}:${i + 1}: ${note}`);
        });
    }
    assert.deepEqual(
      found,
      [],
      `lab notes in user docs (say what the product does instead):\n${found.join("\n")}`,
    );
  });

  const cases: Array<[string, boolean]> = [
    ["Targeted self-heal (issue 19, performance)", true],
    ["fixed in (#27)", true],
    ["see #27 for details", true],
    ["An adversarial review, and what it changed", true],
    ["The third review, continued", true],
    ["under load from four other sessions", true],
    ["as argo-cd #9570 reports", false],
    ["upstream: flux #1234", false],
    ["kubernetes/kubernetes#118000", false],
    ['the reply names why ("you authored 1a2b3c4, opened #1, merged #1")', false],
    ["as argo-cd issue #9570 describes", false],
    ["the HTTP/2 session is torn down", false],
    ["## Heading with no number", false],
    ["PRs are reviewed before merge", false],
    ["an approval review on GitHub", false],
  ];
  for (const [line, flagged] of cases) {
    it(`${flagged ? "flags" : "allows"} ${JSON.stringify(line)}`, () =>
      assert.equal(labNote(line) !== undefined, flagged));
  }
});
