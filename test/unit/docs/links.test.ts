// Every relative link in the user docs leads somewhere: the file exists and, for `#anchor`, a
// heading of that file has that anchor as GitHub makes it. A moved or renamed page or heading
// fails here, naming the file, line and link.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, it } from "node:test";
import { headingAnchors, withoutCode } from "../../../tools/markdown-slug.ts";
import { ROOT, userDocs } from "./doc-files.ts";

export interface Link {
  line: number;
  target: string;
}

/** The link targets of a Markdown text: inline links, images and reference definitions, outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  withoutCode(markdown)
    .split("\n")
    .forEach((raw, i) => {
      const line = raw.replace(/(`+).*?\1/g, "");
      for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        links.push({ line: i + 1, target: m[1]! });
      }
      const def = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)/.exec(line);
      if (def) links.push({ line: i + 1, target: def[1]! });
    });
  return links;
}

/** Why a relative link from `file` does not resolve, or undefined when it does (or is not relative). */
export function brokenReason(
  file: string,
  target: string,
  read: (path: string) => string | undefined,
): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: ...
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
  const path = pathPart ? normalize(join(dirname(file), decodeURIComponent(pathPart))) : file;
  if (path.startsWith("..")) return `${target} leaves the repository`;
  if (pathPart && read(path) === undefined && !isDirectory(path)) return `${path} does not exist`;
  if (anchor === undefined || !path.endsWith(".md")) return undefined;
  const text = read(path);
  if (text === undefined) return `${path} is not a file`;
  return headingAnchors(text).has(anchor.toLowerCase()) ? undefined : `${path} has no heading #${anchor}`;
}

function isDirectory(path: string): boolean {
  const full = join(ROOT, path);
  return existsSync(full) && statSync(full).isDirectory();
}

function readRepoFile(path: string): string | undefined {
  const full = join(ROOT, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
}

describe("links in the user docs", () => {
  it("finds the documents to check", () => {
    const docs = userDocs();
    for (const f of ["README.md", "docs/README.md", "BENCHMARKS.md", "RELIABILITY.md"])
      assert.ok(docs.includes(f), f);
  });

  it("resolves every relative link and anchor", () => {
    const broken: string[] = [];
    for (const file of userDocs()) {
      for (const { line, target } of linksOf(readFileSync(join(ROOT, file), "utf8"))) {
        const reason = brokenReason(file, target, readRepoFile);
        if (reason) broken.push(`${file}:${line}: ${target}: ${reason}`);
      }
    }
    assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
  });

  const files: Record<string, string> = {
    "docs/a.md":
      "# Title\n\n## Sync windows and self-heal\n\n## `environments[].source`\n\n## Notes\n\n## Notes\n",
    "README.md": "# Readme\n",
  };
  const read = (path: string) => files[path];
  const cases: Array<[string, string, string | undefined]> = [
    ["README.md", "docs/a.md", undefined],
    ["README.md", "docs/a.md#sync-windows-and-self-heal", undefined],
    ["README.md", "docs/a.md#environmentssource", undefined],
    ["README.md", "docs/a.md#notes-1", undefined],
    ["README.md", "docs/a.md#notes-2", "docs/a.md has no heading #notes-2"],
    ["docs/a.md", "../README.md#readme", undefined],
    ["docs/a.md", "#title", undefined],
    ["docs/a.md", "#missing", "docs/a.md has no heading #missing"],
    ["docs/a.md", "b.md", "docs/b.md does not exist"],
    ["README.md", "https://example.com/x.md#y", undefined],
    ["docs/a.md", "../../outside.md", "../../outside.md leaves the repository"],
  ];
  for (const [from, target, want] of cases) {
    it(`${from} -> ${target}: ${want ?? "resolves"}`, () =>
      assert.equal(brokenReason(from, target, read), want));
  }

  it("reads links outside code only", () => {
    const md = 'see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d]: d.md\n![img](i.png "t")\n';
    assert.deepEqual(
      linksOf(md).map((l) => l.target),
      ["a.md", "d.md", "i.png"],
    );
  });
});
