// The GitHub test harness must be able to fail: a harness that lets everything through proves nothing.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Probot } from "probot";
import {
  createTestProbot,
  type GitHubMock,
  mockGitHub,
  OpenApiViolation,
  takeOpenApiViolations,
  validateAgainstOpenApi,
} from "../../support/github.ts";
import { checkRunEvent, issueCommentEvent, pullRequestEvent, pushEvent } from "../../support/webhooks.ts";

const SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

let gh: GitHubMock | undefined;
afterEach(() => {
  gh?.reset();
  gh = undefined;
});

async function octokitOf(probot: Probot) {
  return probot.auth(4242);
}

describe("validateAgainstOpenApi", () => {
  it("accepts a valid check run", () => {
    validateAgainstOpenApi(
      "POST",
      "/repos/{owner}/{repo}/check-runs",
      {
        name: "syncward/prod",
        head_sha: SHA,
        status: "completed",
        conclusion: "success",
        output: { title: "t", summary: "s" },
      },
      { owner: "acme", repo: "shop" },
    );
    takeOpenApiViolations();
  });

  const rejected: Array<{
    name: string;
    method: string;
    url: string;
    body: unknown;
    params?: Record<string, unknown>;
    expect: RegExp;
  }> = [
    {
      name: "a check run status GitHub does not have",
      method: "POST",
      url: "/repos/{owner}/{repo}/check-runs",
      body: { name: "n", head_sha: SHA, status: "done" },
      expect: /body\.status: "done" is not one of "queued", "in_progress", "completed"/,
    },
    {
      name: "a deployment status state GitHub does not have",
      method: "POST",
      url: "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses",
      body: { state: "waiting" },
      params: { deployment_id: 1 },
      expect: /body\.state: "waiting" is not one of/,
    },
    {
      name: "a missing required field",
      method: "POST",
      url: "/repos/{owner}/{repo}/check-runs",
      body: { name: "n" },
      expect: /missing required field `head_sha`/,
    },
    {
      name: "a misspelt field that GitHub would silently ignore",
      method: "PATCH",
      url: "/repos/{owner}/{repo}/check-runs/{check_run_id}",
      body: { conclution: "success", output: { title: "t", summary: "s", sumary: "x" } },
      params: { check_run_id: 1 },
      expect: /body\.conclution: GitHub does not know this field[\s\S]*body\.output\.sumary/,
    },
    {
      name: "more than 50 annotations",
      method: "PATCH",
      url: "/repos/{owner}/{repo}/check-runs/{check_run_id}",
      body: {
        output: {
          title: "t",
          summary: "s",
          annotations: Array.from({ length: 51 }, () => ({
            path: "a.yaml",
            start_line: 1,
            end_line: 1,
            annotation_level: "failure",
            message: "m",
          })),
        },
      },
      params: { check_run_id: 1 },
      expect: /body\.output\.annotations: must NOT have more than 50 items/,
    },
    {
      name: "an endpoint GitHub does not have",
      method: "POST",
      url: "/repos/{owner}/{repo}/check-run",
      body: { name: "n" },
      expect:
        /GitHub has no such endpoint: POST \/repos\/\{owner\}\/\{repo\}\/check-run \(did you mean \/repos\/\{owner\}\/\{repo\}\/check-runs\?\)/,
    },
    {
      name: "a method the endpoint does not accept",
      method: "PUT",
      url: "/repos/{owner}/{repo}/check-runs",
      body: {},
      expect: /no such endpoint: PUT \/repos\/\{owner\}\/\{repo\}\/check-runs \(it accepts POST\)/,
    },
    {
      name: "an unknown query parameter",
      method: "GET",
      url: "/repos/{owner}/{repo}/issues/{issue_number}/comments",
      body: undefined,
      params: { issue_number: 7, per_pag: 100 },
      expect: /query: unknown field `per_pag`/,
    },
    {
      name: "a missing path parameter",
      method: "GET",
      url: "/repos/{owner}/{repo}/collaborators/{username}/permission",
      body: undefined,
      params: { owner: "acme", repo: "shop" },
      expect: /path parameter `username` is missing/,
    },
    {
      name: "a reaction GitHub does not have",
      method: "POST",
      url: "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
      body: { content: "thumbsup" },
      params: { comment_id: 1 },
      expect: /body\.content: "thumbsup" is not one of/,
    },
  ];
  for (const c of rejected) {
    it(`rejects ${c.name}`, () => {
      assert.throws(
        () => validateAgainstOpenApi(c.method, c.url, c.body, { owner: "acme", repo: "shop", ...c.params }),
        (err: unknown) => {
          assert.ok(err instanceof OpenApiViolation, `expected an OpenApiViolation, got ${String(err)}`);
          assert.match(err.message, c.expect);
          return true;
        },
      );
      assert.equal(takeOpenApiViolations().length, 1, "the violation is recorded for assertDone");
    });
  }

  it("accepts nullable fields set to null, free-form payloads and literal paths with a query string", () => {
    // `milestone` is `oneOf [string, integer]` with `nullable: true`, which ajv alone refuses.
    validateAgainstOpenApi(
      "PATCH",
      "/repos/{owner}/{repo}/issues/{issue_number}",
      { milestone: null, assignee: null },
      { owner: "acme", repo: "shop", issue_number: 7 },
    );
    validateAgainstOpenApi(
      "POST",
      "/repos/{owner}/{repo}/deployments",
      { ref: SHA, environment: "prod", auto_merge: false, required_contexts: [], payload: { a: 1 } },
      { owner: "acme", repo: "shop" },
    );
    validateAgainstOpenApi(
      "GET",
      "https://api.github.com/repositories/123/issues?page=2&per_page=50",
      undefined,
      {},
    );
    validateAgainstOpenApi("GET", "/repos/acme/shop/pulls/7", undefined, {});
    assert.deepEqual(takeOpenApiViolations(), []);
  });
});

describe("Probot with the test Octokit", () => {
  it("lets a valid checks.create through to the mock", async () => {
    gh = mockGitHub();
    gh.api.post("/repos/acme/shop/check-runs").reply(201, { id: 1 });
    const octokit = await octokitOf(await createTestProbot());
    const { data } = await octokit.rest.checks.create({
      owner: "acme",
      repo: "shop",
      name: "syncward/prod",
      head_sha: SHA,
      status: "in_progress",
    });
    assert.equal(data.id, 1);
    gh.assertDone();
    assert.equal(gh.requests.length, 1);
  });

  it("makes a request GitHub would reject throw before it is sent, and assertDone fails too", async () => {
    gh = mockGitHub();
    const octokit = await octokitOf(await createTestProbot());
    await assert.rejects(
      octokit.rest.repos.createDeploymentStatus({
        owner: "acme",
        repo: "shop",
        deployment_id: 1,
        // @ts-expect-error "waiting" is not a deployment state: the point of the test
        state: "waiting",
      }),
      /GitHub would reject POST \/repos\/\{owner\}\/\{repo\}\/deployments\/\{deployment_id\}\/statuses[\s\S]*"waiting"/,
    );
    assert.throws(() => gh!.assertDone(), /requests GitHub would reject/);
  });

  it("fails assertDone for a mock that was never called", async () => {
    gh = mockGitHub();
    gh.api.get("/repos/acme/shop/collaborators/alice/permission").reply(200, { permission: "write" });
    assert.throws(
      () => gh!.assertDone(),
      /mocks never called:\n\s+GET https:\/\/api\.github\.com:443\/repos\/acme\/shop\/collaborators\/alice\/permission/,
    );
  });

  it("fails an unmocked request, and assertDone even if the caller swallowed the error", async () => {
    gh = mockGitHub();
    const octokit = await octokitOf(await createTestProbot());
    await assert.rejects(
      octokit.rest.issues.createComment({ owner: "acme", repo: "shop", issue_number: 7, body: "hi" }),
    );
    assert.throws(
      () => gh!.assertDone(),
      /requests without a mock:\n\s+POST https:\/\/api\.github\.com\/repos\/acme\/shop\/issues\/7\/comments/,
    );
  });

  it("fails a request with no match on a mocked host", async () => {
    gh = mockGitHub();
    gh.api.get("/repos/acme/shop").reply(200, {});
    const octokit = await octokitOf(await createTestProbot());
    await assert.rejects(octokit.rest.repos.get({ owner: "acme", repo: "other" }), /No match for request/);
    await octokit.rest.repos.get({ owner: "acme", repo: "shop" });
    assert.throws(
      () => gh!.assertDone(),
      /requests without a mock:\n\s+GET https:\/\/api\.github\.com\/repos\/acme\/other/,
    );
  });

  it("validates the requests a handler makes and surfaces its failure from receive()", async () => {
    gh = mockGitHub();
    gh.api.post("/repos/acme/shop/issues/comments/1001/reactions", { content: "eyes" }).reply(201, { id: 1 });
    const probot = await createTestProbot((app) => {
      app.on("issue_comment.created", async (context) => {
        await context.octokit.rest.reactions.createForIssueComment(
          context.repo({ comment_id: context.payload.comment.id, content: "eyes" }),
        );
        // A typo a handler could make: the harness stops it.
        await context.octokit.request("POST /repos/{owner}/{repo}/check-runs", {
          ...context.repo(),
          name: "x",
          head_sha: SHA,
          // @ts-expect-error "done" is not a check-run status: the point of the test
          status: "done",
        });
      });
    });
    await assert.rejects(probot.receive(issueCommentEvent({ body: "/sync" })), (err: unknown) => {
      assert.ok(err instanceof AggregateError);
      assert.match(String(err.errors[0]), /body\.status: "done" is not one of/);
      return true;
    });
    assert.throws(() => gh!.assertDone(), /requests GitHub would reject/);
  });

  it("mocks a second host: the tarball redirect to codeload", async () => {
    gh = mockGitHub();
    gh.api
      .get(`/repos/acme/shop/tarball/${SHA}`)
      .reply(302, "", { location: `https://codeload.github.com/acme/shop/legacy.tar.gz/${SHA}` });
    gh.scope("https://codeload.github.com")
      .get(`/acme/shop/legacy.tar.gz/${SHA}`)
      .reply(200, Buffer.from("tarball bytes"), { "content-type": "application/x-gzip" });
    const octokit = await octokitOf(await createTestProbot());
    const { data } = await octokit.rest.repos.downloadTarballArchive({
      owner: "acme",
      repo: "shop",
      ref: SHA,
    });
    assert.equal(Buffer.from(data as ArrayBuffer).toString(), "tarball bytes");
    gh.assertDone();
    assert.deepEqual(
      gh.requests.map((r) => `${r.method} ${r.url}`),
      [
        `GET https://api.github.com/repos/acme/shop/tarball/${SHA}`,
        `GET https://codeload.github.com/acme/shop/legacy.tar.gz/${SHA}`,
      ],
    );
  });

  it("lets local requests through (the control plane stays reachable)", async () => {
    gh = mockGitHub();
    const { createServer } = await import("node:http");
    const server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await res.text(), "ok");
    } finally {
      server.close();
    }
    gh.assertDone();
  });
});

describe("webhook builders", () => {
  it("build payloads with installation, repository and sender", () => {
    const push = pushEvent({
      owner: "o",
      repo: "r",
      after: SHA,
      modified: ["deploy/a.yaml"],
      sender: { login: "bob" },
    });
    assert.equal(push.name, "push");
    assert.equal(push.payload.installation?.id, 4242);
    assert.equal(push.payload.repository.full_name, "o/r");
    assert.equal(push.payload.repository.owner?.login, "o");
    assert.equal(push.payload.ref, "refs/heads/main");
    assert.equal(push.payload.after, SHA);
    assert.deepEqual(push.payload.head_commit?.modified, ["deploy/a.yaml"]);
    assert.equal(push.payload.sender?.login, "bob");
    assert.ok(!JSON.stringify(push.payload).includes("Codertocat/Hello-World"), "no example repository left");

    const merged = pullRequestEvent("closed", { number: 12, headSha: SHA });
    assert.equal(merged.payload.action, "closed");
    assert.equal(merged.payload.pull_request.merged, true);
    assert.match(String(merged.payload.pull_request.merge_commit_sha), /^[0-9a-f]{40}$/);
    assert.equal(merged.payload.pull_request.head.sha, SHA);
    assert.equal(merged.payload.number, 12);
    assert.equal(pullRequestEvent("closed", { merged: false }).payload.pull_request.merged, false);
    const sync = pullRequestEvent("synchronize", { headSha: SHA });
    assert.equal(sync.payload.action, "synchronize");
    assert.equal(sync.payload.after, SHA);
    assert.equal(pullRequestEvent("opened").payload.pull_request.state, "open");

    const comment = issueCommentEvent({
      body: "/sync prod",
      number: 12,
      sender: { login: "renovate[bot]", type: "Bot" },
    });
    assert.equal(comment.payload.action, "created");
    assert.equal(comment.payload.comment.body, "/sync prod");
    assert.equal(comment.payload.issue.number, 12);
    assert.ok(comment.payload.issue.pull_request, "the comment is on a pull request");
    assert.equal(comment.payload.comment.user?.login, "renovate[bot]");
    assert.equal(comment.payload.sender.type, "Bot");
    assert.equal(
      issueCommentEvent({ body: "x", onPullRequest: false }).payload.issue.pull_request,
      undefined,
    );

    const click = checkRunEvent("requested_action", { identifier: "approve", headSha: SHA, appId: 99 });
    assert.equal(click.payload.action, "requested_action");
    assert.equal(click.payload.requested_action?.identifier, "approve");
    assert.equal(click.payload.check_run.head_sha, SHA);
    assert.equal(click.payload.check_run.app?.id, 99);
    assert.equal(click.payload.repository.full_name, "acme/shop");
    const rerun = checkRunEvent("rerequested", { pullRequests: [3] });
    assert.equal(rerun.payload.action, "rerequested");
    assert.equal(rerun.payload.check_run.pull_requests[0]?.number, 3);

    assert.equal(pushEvent({ deliveryId: "d-1" }).id, "d-1");
  });

  it("are received by Probot", async () => {
    const seen: string[] = [];
    const probot = await createTestProbot((app) => {
      app.onAny(async (context) => {
        seen.push(`${context.name}.${(context.payload as { action?: string }).action ?? ""}`);
      });
    });
    await probot.receive(pushEvent());
    await probot.receive(pullRequestEvent("closed"));
    await probot.receive(issueCommentEvent({ body: "/help" }));
    await probot.receive(checkRunEvent("rerequested"));
    assert.deepEqual(seen, [
      "push.",
      "pull_request.closed",
      "issue_comment.created",
      "check_run.rerequested",
    ]);
  });
});
