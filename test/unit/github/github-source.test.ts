// Branch heads learned from push payloads, which GitHub may deliver out of order, and commit
// verification for policy.requireSignedCommits.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { isTransientGitHubError } from "../../../src/github/github-errors.ts";
import { GitHubSource } from "../../../src/github/github-source.ts";
import type { Octokit } from "../../../src/github/octokit.ts";
import { SourceError } from "../../../src/source/errors.ts";

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

  it("a push learned while the API is being asked is not undone by the API's older answer", async () => {
    let answer: (() => void) | undefined;
    const octokit = {
      rest: {
        repos: {
          getBranch: () =>
            new Promise((resolve) => {
              answer = () => resolve({ data: { commit: { sha: sha(1) } } });
            }),
        },
      },
    } as unknown as Octokit;
    const src = new GitHubSource({ owner: "acme", repo: "shop" }, async () => octokit, "/tmp");
    const reading = src.head("main");
    while (!answer) await new Promise((r) => setImmediate(r));
    src.learnHead("main", sha(2)); // a merged pull request: no `before`
    answer();
    assert.equal(await reading, sha(2), "the read under way answers the newer head");
    assert.equal(await src.head("main"), sha(2), "the next read still knows the merge");
  });

  it("a push delivered late after the API said the branch is further is not taken; nor one that skips a push unseen", async () => {
    const { src, calls } = source(sha(5));
    assert.equal(await src.head("main"), sha(5)); // a poll read the head
    src.learnHead("main", sha(4), sha(3)); // the push to 4, delivered late
    assert.equal(await src.head("main"), sha(5), "asked the API instead of trusting the late push");
    assert.equal(calls.asked, 2);

    const next = source(sha(8));
    next.src.learnHead("main", sha(6), sha(5));
    next.src.learnHead("main", sha(8), sha(7)); // the push to 7 never arrived here
    assert.equal(await next.src.head("main"), sha(8));
    assert.equal(next.calls.asked, 1, "asked once, the head then known");
    next.src.learnHead("main", sha(9), sha(8));
    assert.equal(await next.src.head("main"), sha(9));
    assert.equal(next.calls.asked, 1, "a push from the known head is trusted again");
  });

  it("after forgetting its heads (a takeover), the next read asks the API, and the next push is trusted", async () => {
    const { src, calls } = source(sha(3));
    src.learnHead("main", sha(2), sha(1));
    src.forgetHeads();
    assert.equal(await src.head("main"), sha(3));
    assert.equal(calls.asked, 1);
    src.learnHead("main", sha(4), sha(3));
    assert.equal(await src.head("main"), sha(4));
    assert.equal(calls.asked, 1);
  });

  it("a force push back to an earlier commit is confirmed with the API", async () => {
    const { src } = source(sha(4));
    src.learnHead("main", sha(5), sha(4));
    src.learnHead("main", sha(4), sha(5));
    assert.equal(await src.head("main"), sha(4));
  });
});

/** A source whose API answers each "get a commit" with the next of `answers` (verification objects). */
function verifying(answers: Array<{ verified: boolean; reason: string }>) {
  const calls = { asked: 0 };
  const octokit = {
    rest: {
      repos: {
        getCommit: async () => {
          const verification = answers[Math.min(calls.asked++, answers.length - 1)];
          return { data: { commit: { verification } } };
        },
      },
    },
  } as unknown as Octokit;
  return { src: new GitHubSource({ owner: "acme", repo: "shop" }, async () => octokit, "/tmp"), calls };
}

describe("GitHubSource commit verification", () => {
  it("an unsigned commit is refused with GitHub's reason, asked once", async () => {
    const { src, calls } = verifying([{ verified: false, reason: "unsigned" }]);
    assert.match(
      (await src.signatureProblem(sha(1))) ?? "",
      /not Verified on GitHub: the commit is not signed/,
    );
    assert.match((await src.signatureProblem(sha(1))) ?? "", /not signed/);
    assert.equal(calls.asked, 1);
  });

  for (const reason of ["gpgverify_unavailable", "gpgverify_error"]) {
    it(`${reason} (GitHub's side) is a transient failure, not a refusal, and is asked again`, async () => {
      const { src, calls } = verifying([
        { verified: false, reason },
        { verified: true, reason: "valid" },
      ]);
      await assert.rejects(src.signatureProblem(sha(1)), (err: unknown) => {
        assert.equal(isTransientGitHubError(err), true);
        assert.match(String(err), new RegExp(reason));
        return true;
      });
      assert.equal(await src.signatureProblem(sha(1)), undefined);
      assert.equal(calls.asked, 2);
    });
  }
});

describe("GitHubSource trees", () => {
  /** A source whose tarball download fails with `answer`. */
  const failing = (answer: Error) => {
    const octokit = {
      rest: {
        repos: {
          downloadTarballArchive: async () => {
            throw answer;
          },
        },
      },
    } as unknown as Octokit;
    return new GitHubSource(
      { owner: "acme", repo: "shop" },
      async () => octokit,
      mkdtempSync(join(tmpdir(), "gh-tree-")),
    );
  };

  const cases: Array<[string, Error, number]> = [
    ["an outage (502)", Object.assign(new Error("Bad Gateway"), { status: 502 }), 502],
    [
      "a spent quota (403, x-ratelimit-remaining 0)",
      Object.assign(new Error("API rate limit exceeded"), {
        status: 403,
        response: { headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" } },
      }),
      403,
    ],
  ];
  for (const [what, answer, status] of cases) {
    it(`a tarball GitHub failed to serve (${what}) fails with GitHub's status and as retryable, not as a render failure`, async () => {
      await assert.rejects(failing(answer).tree(sha(1)), (err: unknown) => {
        assert.equal((err as { status?: number }).status, status);
        assert.equal(
          (err as { retryable?: boolean }).retryable,
          true,
          "the engine's retry takes it for transient",
        );
        assert.equal(isTransientGitHubError(err), true, "the report queue keeps what waits on it");
        assert.equal(err instanceof SourceError, false, "not a render failure");
        return true;
      });
    });
  }
});

describe("GitHubSource commit titles", () => {
  it("come from the push payload and GitHub's answers already made, never from a request of their own", async () => {
    const calls = { asked: 0 };
    const octokit = {
      rest: {
        repos: {
          getBranch: async () => {
            calls.asked++;
            return { data: { commit: { sha: sha(7), commit: { message: "api: retry on 503\n\nbody" } } } };
          },
        },
      },
    } as unknown as Octokit;
    const src = new GitHubSource({ owner: "acme", repo: "shop" }, async () => octokit, "/tmp");
    src.learnTitle(sha(1), "web: bump to 1.29\n\nWhy.");
    src.learnHead("main", sha(2), sha(1), "handed over by another replica");
    assert.equal(await src.commitTitle(sha(1)), "web: bump to 1.29");
    assert.equal(await src.commitTitle(sha(2)), "handed over by another replica");
    assert.equal(await src.commitTitle(sha(3)), undefined, "unknown: GitHub is not asked");
    assert.equal(calls.asked, 0);
    // The branch's answer carries its head commit's message.
    assert.equal(await src.head("release"), sha(7));
    assert.equal(await src.commitTitle(sha(7)), "api: retry on 503");
    assert.equal(calls.asked, 1);
  });
});

describe("GitHubSource ancestry (whether a pinned commit is behind a newer one)", () => {
  /** GitHub's compare answers `status` (or throws an error with `status` as its HTTP status). */
  function comparing(answers: Record<string, string | number>) {
    const asked: string[] = [];
    const octokit = {
      rest: {
        repos: {
          compareCommitsWithBasehead: async ({ basehead }: { basehead: string }) => {
            asked.push(basehead);
            const answer = answers[basehead];
            if (typeof answer === "number")
              throw Object.assign(new Error("GitHub said no"), { status: answer });
            return { data: { status: answer } };
          },
        },
      },
    } as unknown as Octokit;
    return { src: new GitHubSource({ owner: "acme", repo: "shop" }, async () => octokit, "/tmp"), asked };
  }

  it("ahead and identical are a line of history; behind, diverged and a commit GitHub no longer has are not", async () => {
    const { src } = comparing({
      [`${sha(1)}...${sha(2)}`]: "ahead",
      [`${sha(1)}...${sha(3)}`]: "identical",
      [`${sha(2)}...${sha(1)}`]: "behind",
      [`${sha(1)}...${sha(4)}`]: "diverged",
      [`${sha(1)}...${sha(5)}`]: 404,
      [`${sha(1)}...${sha(6)}`]: 422,
    });
    assert.equal(await src.contains(sha(1), sha(2)), true);
    assert.equal(await src.contains(sha(1), sha(3)), true);
    assert.equal(await src.contains(sha(2), sha(1)), false);
    assert.equal(await src.contains(sha(1), sha(4)), false, "a force push's history");
    assert.equal(await src.contains(sha(1), sha(5)), false);
    assert.equal(await src.contains(sha(1), sha(6)), false);
    assert.equal(await src.contains(sha(7), sha(7)), true, "a commit is its own");
  });

  it("asks once per pair; GitHub failing is thrown, not taken for a no, and asked again", async () => {
    const answers: Record<string, string | number> = { [`${sha(1)}...${sha(2)}`]: 503 };
    const { src, asked } = comparing(answers);
    await assert.rejects(src.contains(sha(1), sha(2)), /GitHub said no/);
    answers[`${sha(1)}...${sha(2)}`] = "ahead";
    assert.equal(await src.contains(sha(1), sha(2)), true);
    assert.equal(await src.contains(sha(1), sha(2)), true);
    assert.equal(asked.length, 2);
  });
});
