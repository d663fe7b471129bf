// The programs the tests run are looked for before any test runs (tools/run-tests.ts), each named
// with what needs it and how to install it, and each is listed in the getting-started page.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { describeMissing, missingTools, TOOLS } from "../../../tools/prerequisites.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const dir = mkdtempSync(join(tmpdir(), "syncward-path-"));
before(() => {
  // A PATH with git and tar, and an openssl that is not executable.
  for (const name of ["git", "tar"]) {
    writeFileSync(join(dir, name), "#!/bin/sh\n");
    chmodSync(join(dir, name), 0o755);
  }
  writeFileSync(join(dir, "openssl"), "not executable\n");
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe("test prerequisites", () => {
  it("names each program PATH lacks, what needs it and how to install it", () => {
    const missing = missingTools(["test/unit/cli/completion.test.ts"], { PATH: dir });
    assert.deepEqual(
      missing.map((t) => t.name),
      ["openssl", "kubectl", "bash", "zsh", "fish"],
    );
    const text = describeMissing(missing);
    assert.match(
      text,
      /^The tests need programs that are not on PATH \(docs\/getting-started\.md, "Prerequisites"\):/,
    );
    assert.match(
      text,
      /\n {2}kubectl: its built-in kustomize renders Kustomize sources\. Install: .*tools\/cluster\/build\.sh kubectl/,
    );
    assert.match(text, /\n {2}zsh: .* Install: sudo apt-get install zsh, or brew install zsh\./);
  });

  it("asks for the completion tests' shells only when those tests run", () => {
    assert.deepEqual(
      missingTools(["test/unit/deploy/chart.test.ts"], { PATH: dir }).map((t) => t.name),
      ["openssl", "kubectl", "bash"],
    );
  });

  it("are each listed under Prerequisites in docs/getting-started.md", () => {
    const page = readFileSync(join(ROOT, "docs", "getting-started.md"), "utf8");
    const section = page.slice(
      page.indexOf("## Prerequisites"),
      page.indexOf("\n## ", page.indexOf("## Prerequisites") + 1),
    );
    for (const tool of TOOLS) assert.match(section, new RegExp(`\\b${tool.name}\\b`), tool.name);
  });
});
