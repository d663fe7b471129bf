// A preview's Reconciler reads its head from what the preview manager let through, never from
// GitHub: the branch a push moved is not synced until the manager says so.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { GitHubSource } from "../../../src/github/github-source.ts";
import { PreviewSource } from "../../../src/github/preview-source.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("PreviewSource", () => {
  const asked: string[] = [];
  const github = new GitHubSource(
    { owner: "acme", repo: "shop" },
    async () => {
      asked.push("octokit");
      throw new Error("a preview's head is never asked of GitHub");
    },
    mkdtempSync(join(tmpdir(), "syncward-preview-source-")),
  );

  it("answers the head it was given, however often, without asking GitHub", async () => {
    const source = new PreviewSource(github, "feature-1", A);
    for (let i = 0; i < 3; i++) assert.equal(await source.head("feature-1"), A);
    assert.deepEqual(asked, []);
  });

  it("moves only when told (the manager's checked push, or one handed over by the replica that checked it)", async () => {
    const source = new PreviewSource(github, "feature-1", A);
    source.learnHead("feature-1", B, A, "the push's title");
    assert.equal(await source.head("feature-1"), B);
    assert.equal(await source.commitTitle(B), "the push's title");
    assert.deepEqual(asked, []);
  });

  it("taking the preview over, reads the head its stored record holds, once", async () => {
    let reads = 0;
    const source = new PreviewSource(github, "feature-1", A, async () => {
      reads++;
      return B;
    });
    assert.equal(await source.head("feature-1"), A, "not before a takeover");
    source.forgetHeads();
    assert.equal(await source.head("feature-1"), B);
    assert.equal(await source.head("feature-1"), B);
    assert.equal(reads, 1);
  });

  it("a push learned while the record is read stands; an unreadable record keeps the head held", async () => {
    const C = "c".repeat(40);
    let answer: (sha: string | undefined) => void = () => {};
    const source = new PreviewSource(github, "feature-1", A, () => new Promise((r) => (answer = r)));
    source.forgetHeads();
    const reading = source.head("feature-1");
    source.learnHead("feature-1", C);
    answer(B);
    assert.equal(await reading, C);
    assert.equal(await source.head("feature-1"), C);

    const failing = new PreviewSource(github, "feature-1", A, async () => {
      throw new Error("API server down");
    });
    failing.forgetHeads();
    assert.equal(await failing.head("feature-1"), A);
  });

  it("reads trees and commits through GitHub as the repository's source does", async () => {
    const source = new PreviewSource(github, "feature-1", A);
    await assert.rejects(source.resolve("v1"), /never asked of GitHub/);
    assert.deepEqual(asked, ["octokit"]);
  });
});
