// Branch heads learned from push payloads, which GitHub may deliver out of order.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GitHubSource } from "../../../src/github/github-source.ts";
import type { Octokit } from "../../../src/github/octokit.ts";

const sha = (n: number) => String(n).repeat(40).slice(0, 40);

/** A source whose API says the branch is at `apiHead`; `asked` counts API calls. */
function source(apiHead: string) {
  const calls = { asked: 0 };
  const octokit = {
    rest: {
      repos: {
        getBranch: async () => {
          calls.asked++;
          return { data: { commit: { sha: apiHead } } };
        },
      },
    },
  } as unknown as Octokit;
  return { src: new GitHubSource({ owner: "acme", repo: "shop" }, async () => octokit, "/tmp"), calls };
}

describe("GitHubSource heads from pushes", () => {
  it("trusts the newest push without asking the API", async () => {
    const { src, calls } = source(sha(9));
    src.learnHead("main", sha(2), sha(1));
    src.learnHead("main", sha(3), sha(2));
    assert.equal(await src.head("main"), sha(3));
    assert.equal(calls.asked, 0);
  });

  it("a push delivered late (to a commit a later push moved away from) does not move the head back", async () => {
    const { src, calls } = source(sha(5));
    src.learnHead("main", sha(4), sha(3));
    src.learnHead("main", sha(5), sha(4));
    src.learnHead("main", sha(4), sha(3)); // the late one
    assert.equal(await src.head("main"), sha(5), "asked the API instead of trusting the late push");
    assert.equal(calls.asked, 1);
  });

  it("a force push back to an earlier commit is confirmed with the API", async () => {
    const { src } = source(sha(4));
    src.learnHead("main", sha(5), sha(4));
    src.learnHead("main", sha(4), sha(5));
    assert.equal(await src.head("main"), sha(4));
  });
});
