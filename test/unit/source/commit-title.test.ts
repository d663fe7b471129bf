// The title history keeps of a commit: its first line, bounded, with what a reader cannot see
// (or a terminal would obey) written out; and the local git source reading it once per commit.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { LocalGitSource } from "../../../src/reconciler/revision-source.ts";
import { commitTitle, MAX_TITLE_CHARS } from "../../../src/source/commit-title.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

describe("commitTitle", () => {
  const table: Array<[string, string | undefined | null, string | undefined]> = [
    ["the first line of a message", "web: bump to 1.29\n\nWhy: CVE-2026-1.\n", "web: bump to 1.29"],
    ["CRLF line ends", "fix: checkout\r\nbody", "fix: checkout"],
    ["trimmed", "   spaced out   \n", "spaced out"],
    ["an empty message has none", "\n\nbody only after a blank line", undefined],
    ["no message at all", undefined, undefined],
    ["null (a payload without it)", null, undefined],
    ["a right-to-left override written out", "fix \u202egnp.exe", "fix \\u{202e}gnp.exe"],
    ["a terminal escape written out", "ok\u001b[2J", "ok\\u{001b}[2J"],
  ];
  for (const [name, message, want] of table) it(name, () => assert.equal(commitTitle(message), want));

  it("a page-long subject is cut to MAX_TITLE_CHARS code points, ending in …", () => {
    const title = commitTitle("漢".repeat(5000));
    assert.equal(Array.from(title ?? "").length, MAX_TITLE_CHARS);
    assert.ok(title?.endsWith("…"));
  });
});

describe("LocalGitSource.commitTitle", () => {
  const repo = new TestRepo();
  const cache = tempDir("syncward-cache-");
  after(() => cleanup(repo.dir, cache));

  it("reads the commit's first line from git", async () => {
    const sha = repo.commit("api: retry on 503\n\nlonger body", { "a.txt": "1\n" });
    const src = new LocalGitSource(repo.dir, cache);
    assert.equal(await src.commitTitle(sha), "api: retry on 503");
  });

  it("says nothing of a commit git does not have, or of what is not a SHA", async () => {
    const src = new LocalGitSource(repo.dir, cache);
    assert.equal(await src.commitTitle("f".repeat(40)), undefined);
    assert.equal(await src.commitTitle("--output=/tmp/x"), undefined);
  });
});
