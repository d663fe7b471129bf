// The configuration examples a newcomer copies (README.md and docs/getting-started.md) are
// configurations syncward accepts: a renamed field or a changed rule fails here, not in their repository.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig } from "../../../src/config/load.ts";
import { parseProjects } from "../../../src/projects/load.ts";
import { ROOT } from "./doc-files.ts";

/** The YAML blocks of a Markdown text that are whole documents: `top:` comes first (after comments). */
function blocksDeclaring(markdown: string, top: string): string[] {
  return [...markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)]
    .map((m) => m[1]!)
    .filter((yaml) => new RegExp(`^(?:#.*\\n)*${top}:`).test(yaml));
}

describe("configuration examples in the docs", () => {
  for (const file of ["README.md", "docs/getting-started.md"]) {
    const blocks = blocksDeclaring(readFileSync(join(ROOT, file), "utf8"), "environments");
    it(`${file} has configuration examples`, () => assert.ok(blocks.length > 0));
    blocks.forEach((yaml, i) => {
      it(`${file}, example ${i + 1}, is a valid configuration`, () => {
        assert.ok(parseConfig(yaml, `${file} example ${i + 1}`).environments.length > 0);
      });
    });
  }

  it("docs/operating/projects.md's projects document is one syncward accepts", () => {
    const blocks = blocksDeclaring(
      readFileSync(join(ROOT, "docs/operating/projects.md"), "utf8"),
      "projects",
    );
    assert.ok(blocks.length > 0);
    for (const yaml of blocks)
      assert.ok(parseProjects(yaml, "docs/operating/projects.md").projects.length > 0);
  });

  it("refuses an example with a mistyped field, so the check can fail", () => {
    assert.throws(() =>
      parseConfig(
        "environments:\n  - name: dev\n    source: {path: .}\n    destination: {namespace: a}\n    syncPolicy: {automated: {prun: true}}\n",
      ),
    );
  });
});
