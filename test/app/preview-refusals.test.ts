// Previews that must not happen, answered without reaching any cluster (the app's cluster is
// unreachable, so any attempt to read it would fail the test): a fork's pull request, `/diff` on a
// fork by someone without write permission or when the operator turned fork previews off, and an
// environment whose previews are opt-in.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockConfig, mockPull } from "../support/app.ts";
import { mockRefusal, useOfflineApp } from "../support/comment-app.ts";
import { issueCommentEvent, pullRequestEvent } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: dev
    source: {path: overlays/dev}
    destination: {namespace: shop-dev}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    production: true
    approval: {users: [carol], minimum: 1}
`;

const app = useOfflineApp();
const HEAD = "c".repeat(40);

/** The pull request changes `files` (GitHub's list of a PR's files). */
function mockFiles(files: string[]): void {
  app()
    .mock.api.get("/repos/acme/shop/pulls/7/files")
    .query(true)
    .reply(
      200,
      files.map((filename) => ({ filename, status: "modified" })),
    );
}

const diffComment = (body: string, login: string) =>
  issueCommentEvent({ body, sender: { login, type: "User" }, commentId: 1001 });

describe("previews that are refused before anything is read", () => {
  it("a fork's pull request gets no preview: only its changed files are listed (for the config check)", async () => {
    mockFiles(["README.md"]);
    await app().probot.receive(pullRequestEvent("opened", { number: 7, headSha: HEAD, fork: true }));
    app().mock.assertDone();
    assert.deepEqual(
      app().mock.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`),
      ["GET /repos/acme/shop/pulls/7/files"],
    );
  });

  it("only opt-in environments are previewed: production and approval-gated ones are left out", async () => {
    mockFiles(["overlays/prod/kustomization.yaml"]);
    mockConfig(
      app().mock,
      CONFIG.replace(
        "  - name: dev\n    source: {path: overlays/dev}\n    destination: {namespace: shop-dev}\n",
        "",
      ),
    );
    await app().probot.receive(pullRequestEvent("opened", { number: 7, headSha: HEAD }));
    app().mock.assertDone();
    assert.deepEqual(
      app().mock.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`),
      ["GET /repos/acme/shop/pulls/7/files", "GET /repos/acme/shop/contents/.github%2Fsyncward.yml"],
      "the files were listed and the config read, and nothing else happened",
    );
  });

  it("/diff on a fork's pull request needs write permission", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "rita", permission: "read" });
    mockPull(app().mock, 7, { head: HEAD, mergeCommit: "d".repeat(40), fork: true });
    await app().probot.receive(diffComment("/diff dev", "rita"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /Sorry @rita, `\/diff dev` on a pull request from a fork needs \*\*write\*\* permission on this repository and you have \*\*read\*\*\. Nothing was run\./,
    );
  });

  it("/diff on a fork is refused to everyone when the operator set SYNCWARD_FORK_PREVIEWS=never", async () => {
    process.env.SYNCWARD_FORK_PREVIEWS = "never";
    try {
      const reply = mockRefusal(app().mock, CONFIG, { login: "olga", permission: "admin" });
      mockPull(app().mock, 7, { head: HEAD, mergeCommit: "d".repeat(40), fork: true });
      await app().probot.receive(diffComment("/diff dev", "olga"));
      app().mock.assertDone();
      assert.match(reply.body(), /does not preview pull requests from forks against the live cluster/);
    } finally {
      delete process.env.SYNCWARD_FORK_PREVIEWS;
    }
  });
});
