// End to end: a webhook in, the real local cluster changed, and the GitHub requests out (check
// runs, deployments and statuses, comments), asserted together. GitHub is nock, every request
// validated against GitHub's OpenAPI description; Git is a real repository served as a tarball.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import {
  mockConfig,
  mockNoEarlierDeployments,
  mockPermission,
  mockPull,
  mockPullFiles,
  mockReactions,
  mockReply,
  REPO_PATH,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo, testMerge } from "../support/git-repo.ts";
import type { GitHubMock } from "../support/github.ts";
import { checkRunId } from "../support/github-checks.ts";
import { apiPull, type FakePull, mockAccount, mockRange } from "../support/github-range.ts";
import { issueCommentEvent, pullRequestEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const CODELOAD = "https://codeload.github.com";

const manifests = (tag: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {release: "${tag}"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:${tag}"}]}
`;

function mockTarball(mock: GitHubMock, repo: TestRepo, sha: string): void {
  const download = `/acme/shop/legacy.tar.gz/${sha}?token=short-lived`;
  mock.api.get(`${REPO_PATH}/tarball/${sha}`).reply(302, "", { location: `${CODELOAD}${download}` });
  mock
    .scope(CODELOAD)
    .get(download)
    .reply(200, () => tarball(repo, sha), { "content-type": "application/x-gzip" });
}

/** The repository at `sha` as GitHub serves it: a gzipped tar with one top-level folder. */
function tarball(repo: TestRepo, sha: string): Buffer {
  return execFileSync("git", ["archive", "--format=tar.gz", `--prefix=acme-shop-${sha.slice(0, 7)}/`, sha], {
    cwd: repo.dir,
  });
}

interface Captured {
  checks: Array<{
    name: string;
    head_sha: string;
    conclusion?: string;
    output?: { title: string; summary: string };
  }>;
  statuses: Array<{
    id: number;
    state: string;
    description?: string;
    environment_url?: string;
    log_url?: string;
  }>;
  deployments: Array<{
    environment: string;
    ref: string;
    production_environment?: boolean;
    auto_merge: boolean;
    required_contexts: string[];
  }>;
}

/**
 * Check runs are created (a sync's in progress, a waiting one's action_required) and then updated
 * (the sync's result): `captured.checks` holds each run as it stands after its updates.
 */
function captureGitHubWrites(
  mock: GitHubMock,
  ids: Record<string, number>,
  captured: Captured,
  times: { checks: number; updates?: number; statuses: Record<string, number> },
): void {
  if (times.checks > 0)
    mock.api
      .post(`${REPO_PATH}/check-runs`, (b: Captured["checks"][number]) => {
        captured.checks.push(b);
        return true;
      })
      .times(times.checks)
      .reply(201, (_uri: string, body: { name: string; head_sha: string }) => {
        const id = checkRunId(captured.checks, body);
        return { id, name: body.name, html_url: `https://github.com/acme/shop/runs/${id}` };
      });
  if (times.updates)
    mock.api
      .patch(/\/check-runs\/9\d{3}$/, () => true)
      .times(times.updates)
      .reply(200, (uri: string, body: Partial<Captured["checks"][number]>) => {
        const id = Number(uri.split("/").at(-1));
        const run = captured.checks[id - 9001];
        if (run) Object.assign(run, body);
        return { id, html_url: `https://github.com/acme/shop/runs/${id}` };
      });
  for (const [env, id] of Object.entries(ids)) {
    const n = times.statuses[env] ?? 0;
    if (n === 0) continue;
    mock.api
      .post(`${REPO_PATH}/deployments/${id}/statuses`, (b: Omit<Captured["statuses"][number], "id">) => {
        captured.statuses.push({ id, ...b });
        return true;
      })
      .times(n)
      .reply(201, { id: 1, state: "ok" });
  }
}

/** Bob's pull request #7, merged by Bob as `merge`. */
function mergedPull7(merge: string): FakePull {
  return {
    number: 7,
    author: "bob",
    mergedBy: "bob",
    commits: [merge],
    mergeCommit: merge,
    head: "f".repeat(40),
  };
}

function mockDeployment(mock: GitHubMock, env: string, id: number, captured: Captured): void {
  mock.api
    .post(`${REPO_PATH}/deployments`, (b: Captured["deployments"][number]) => {
      if (b.environment !== env) return false;
      captured.deployments.push(b);
      return true;
    })
    .reply(201, { id, environment: env });
}

describe("GitHub App end to end", () => {
  let app: TestApp;
  let repo: TestRepo;
  let devNs: string;
  let prodNs: string;
  let first: string;
  const captured: Captured = { checks: [], statuses: [], deployments: [] };

  before(async () => {
    devNs = await cluster.namespace("gh-dev");
    prodNs = await cluster.namespace("gh-prod");
    const stateNs = await cluster.stateNamespace("gh-state");
    repo = makeRepo({
      "dev/app.yaml": manifests("1.27"),
      "prod/app.yaml": manifests("1.27"),
      "README.md": "docs\n",
    });
    first = repo.head();
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    const config = `environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: ${devNs}}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
    environmentUrl: https://dev.example.com
  - name: prod
    source: {path: prod}
    destination: {namespace: ${prodNs}}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [carol], minimum: 1}
`;
    mockConfig(app.mock, config);
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  it("a push deploys dev (7 API calls) and holds prod for approval, with deployments and live check runs", async () => {
    mockTarball(app.mock, repo, first);
    mockNoEarlierDeployments(app.mock, "dev");
    mockNoEarlierDeployments(app.mock, "prod");
    // prod's waiting check run shows what it would deploy: a first deployment, the pushed commit.
    mockRange(app.mock, { head: first, commits: [{ sha: first, author: "alice" }], pulls: [] });
    mockDeployment(app.mock, "dev", 101, captured);
    mockDeployment(app.mock, "prod", 202, captured);
    captureGitHubWrites(app.mock, { dev: 101, prod: 202 }, captured, {
      checks: 2,
      updates: 1,
      statuses: { dev: 2, prod: 1 },
    });
    await app.probot.receive(
      pushEvent({
        after: first,
        before: "0".repeat(40),
        modified: ["dev/app.yaml", "prod/app.yaml"],
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();

    // The cluster changed for dev only.
    assert.ok(await cluster.client.get("apps/v1", "Deployment", devNs, "web"));
    assert.equal(
      await cluster.client.get("apps/v1", "Deployment", prodNs, "web"),
      undefined,
      "prod waits for approval",
    );

    const dev = captured.deployments.find((d) => d.environment === "dev");
    assert.deepEqual(
      dev && {
        ref: dev.ref,
        auto_merge: dev.auto_merge,
        required_contexts: dev.required_contexts,
        production: dev.production_environment,
      },
      {
        ref: first,
        auto_merge: false,
        required_contexts: [],
        production: false,
      },
    );
    assert.equal(captured.deployments.find((d) => d.environment === "prod")?.production_environment, true);
    // A deployment that starts at once is in progress from its first status.
    assert.deepEqual(
      captured.statuses.filter((s) => s.id === 101).map((s) => s.state),
      ["in_progress", "success"],
    );
    assert.equal(
      captured.statuses.find((s) => s.id === 101 && s.state === "success")?.environment_url,
      "https://dev.example.com",
    );
    assert.deepEqual(
      captured.statuses.filter((s) => s.id === 202).map((s) => s.state),
      ["queued"],
    );
    assert.match(
      captured.statuses.find((s) => s.id === 202)?.description ?? "",
      /waiting for approval \(0\/1\)/,
    );

    // One run for dev: created in progress with the plan, then completed with the result.
    const devChecks = captured.checks.filter((c) => c.name === "syncward / dev");
    assert.equal(devChecks.length, 1);
    const devCheck = devChecks[0];
    assert.equal(devCheck?.head_sha, first);
    assert.equal((devCheck as { status?: string })?.status, "completed");
    assert.equal(devCheck?.conclusion, "success");
    assert.equal((devCheck as { details_url?: string })?.details_url, "https://dev.example.com");
    assert.match(devCheck?.output?.summary ?? "", /Synced to main \(/);
    assert.match(devCheck?.output?.summary ?? "", /deployment\.apps\/web created|web/);
    const prodCheck = captured.checks.find((c) => c.name === "syncward / prod");
    assert.equal(prodCheck?.conclusion, "action_required");
    assert.match(prodCheck?.output?.title ?? "", /Waiting for approval/);

    // The budget: tarball, deployment, 2 statuses, a check run created and completed, and, this
    // first time after the start, a look for a deployment of the commit made before a restart.
    const devCalls = app.mock.requests.filter(
      (r) =>
        /\/tarball\//.test(r.url) ||
        /\/deployments\?.*environment=dev/.test(r.url) ||
        /deployments\/101\//.test(r.url) ||
        (r.method === "POST" &&
          /\/deployments$/.test(r.url) &&
          (r.body as { environment?: string })?.environment === "dev") ||
        (/check-runs/.test(r.url) && (r.body as { name?: string })?.name === "syncward / dev") ||
        // The only update in this test completes dev's run.
        (r.method === "PATCH" && /check-runs/.test(r.url)),
    );
    assert.ok(
      devCalls.length <= 7,
      `an automated sync that succeeds made ${devCalls.length} GitHub API calls`,
    );
  });

  it("/approve prod by an approver deploys the approved commit", async () => {
    mockReactions(app.mock, 1001, "rocket");
    mockPermission(app.mock, "carol", "write");
    // carol's first approval: her listed login is pinned to her GitHub account.
    mockAccount(app.mock, "carol");
    const pr7 = mergedPull7(first);
    app.mock.api.get(`${REPO_PATH}/pulls/7`).reply(200, apiPull(pr7));
    // A first deployment: the pending commit alone is what would be deployed.
    mockRange(app.mock, { head: first, commits: [{ sha: first, author: "bob" }], pulls: [pr7] });
    const reply = mockReply(app.mock, 7);
    captureGitHubWrites(app.mock, { prod: 202 }, captured, { checks: 1, updates: 1, statuses: { prod: 2 } });
    const event = issueCommentEvent({ body: "/approve prod", sender: { login: "carol" } });
    (event.payload.issue.user as { login: string }).login = "bob";
    await app.probot.receive(event);
    await app.settle();
    app.mock.assertDone();
    assert.match(reply.body(), /Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\); deploying\./);
    assert.ok(
      await cluster.client.get("apps/v1", "Deployment", prodNs, "web"),
      "prod deployed after approval",
    );
    assert.deepEqual(
      captured.statuses.filter((s) => s.id === 202).map((s) => s.state),
      ["queued", "in_progress", "success"],
    );
  });

  it("a commit that changes only comments and notes under prod/ needs no approval: no deployment, no check run, 'no change' in history", async () => {
    const docs = repo.commit(
      {
        "prod/app.yaml": `# Owned by the payments team.\n${manifests("1.27")}`,
        "prod/NOTES.md": "runbook\n",
      },
      "docs: prod notes",
    );
    mockTarball(app.mock, repo, docs);
    const before = app.mock.requests.length;
    const push = pushEvent({
      after: docs,
      before: first,
      modified: ["prod/app.yaml", "prod/NOTES.md"],
      sender: { login: "alice" },
    });
    // The payload carries the commit's message: history keeps its title without asking GitHub.
    const payload = push.payload as { head_commit: { message: string }; commits: Array<{ message: string }> };
    payload.head_commit.message = "docs: prod notes\n\nWhere the runbook lives.";
    payload.commits[0]!.message = payload.head_commit.message;
    await app.probot.receive(push);
    await app.settle();
    app.mock.assertDone();
    const made = app.mock.requests.slice(before).map((r) => `${r.method} ${r.url}`);
    assert.ok(
      made.every((r) => /\/tarball\/|legacy\.tar\.gz/.test(r)),
      `only the commit's tarball was read; no deployment, check run or comment: ${made.join(", ")}`,
    );
    const rt = app.parts.runtimes.all()[0];
    assert.ok(rt);
    const state = await rt.reconciler.store.load(rt.reconciler.controller("prod").instance);
    assert.equal(state.lastSyncedRevision, docs);
    assert.equal(state.history.at(-1)?.message, "no change for prod");
    assert.equal(state.history.at(-1)?.title, "docs: prod notes");
    assert.equal(state.pendingSync, undefined);
  });

  it("a newer commit needs a new approval, and approving the old one says it is stale", async () => {
    // prod's deployed revision is the docs-only commit the previous test advanced it to.
    const deployed = repo.head();
    const second = repo.commit({ "prod/app.yaml": manifests("1.28") }, "bump prod");
    mockTarball(app.mock, repo, second);
    mockRange(app.mock, {
      base: deployed,
      head: second,
      commits: [{ sha: second, author: "alice" }],
      pulls: [],
    });
    mockDeployment(app.mock, "prod", 303, captured);
    captureGitHubWrites(app.mock, { prod: 303 }, captured, { checks: 1, statuses: { prod: 1 } });
    await app.probot.receive(
      pushEvent({ after: second, before: deployed, modified: ["prod/app.yaml"], sender: { login: "alice" } }),
    );
    await app.settle();

    mockReactions(app.mock, 1002, "confused");
    mockPermission(app.mock, "carol", "write");
    app.mock.api.get(`${REPO_PATH}/pulls/7`).reply(200, apiPull(mergedPull7(first)));
    const reply = mockReply(app.mock, 7);
    const event = issueCommentEvent({ body: "/approve prod", sender: { login: "carol" }, commentId: 1002 });
    (event.payload.issue.user as { login: string }).login = "bob";
    await app.probot.receive(event);
    await app.settle();
    app.mock.assertDone();
    assert.match(
      reply.body(),
      /stale: \*\*prod\*\* is waiting for `[0-9a-f]{7}`, but this pull request is `[0-9a-f]{7}`/,
    );
    const live = (await cluster.client.get("v1", "ConfigMap", prodNs, "settings")) as unknown as {
      data: { release: string };
    };
    assert.equal(live.data.release, "1.27", "nothing deployed without a fresh approval");
  });

  it("a frozen environment refuses /sync with who froze it, when and why", async () => {
    mockReactions(app.mock, 1003, "rocket");
    mockPermission(app.mock, "alice", "write");
    const frozen = mockReply(app.mock, 7);
    await app.probot.receive(
      issueCommentEvent({ body: '/freeze dev "incident 42"', sender: { login: "alice" }, commentId: 1003 }),
    );
    await app.settle();
    assert.match(frozen.body(), /\*\*dev\*\* is frozen by @alice: `incident 42`/);

    mockReactions(app.mock, 1004, "confused");
    mockPermission(app.mock, "alice", "write");
    const refused = mockReply(app.mock, 7);
    const checks: Captured = { checks: [], statuses: [], deployments: [] };
    captureGitHubWrites(app.mock, {}, checks, { checks: 1, statuses: {} });
    await app.probot.receive(
      issueCommentEvent({ body: "/sync dev", sender: { login: "alice" }, commentId: 1004 }),
    );
    await app.settle();
    app.mock.assertDone();
    assert.match(refused.body(), /refused: frozen by @alice since \d{4}-\d\d-\d\dT[\d:.]+Z \(incident 42\)/);
    // The refusal is on the environment's check run too.
    assert.match(checks.checks[0]?.output?.title ?? "", /^Refused: frozen by @alice/);
  });

  it("/approve that releases a sync of a frozen prod is answered with the refusal in the reply, the check run and the deployment status", async () => {
    const second = repo.head();
    mockReactions(app.mock, 1005, "rocket");
    mockPermission(app.mock, "alice", "write");
    mockReply(app.mock, 7);
    await app.probot.receive(
      issueCommentEvent({
        body: '/freeze prod "release night"',
        sender: { login: "alice" },
        commentId: 1005,
      }),
    );
    await app.settle();

    mockReactions(app.mock, 1006, "confused");
    mockPermission(app.mock, "carol", "write");
    const pr8: FakePull = {
      number: 8,
      author: "bob",
      mergedBy: "bob",
      commits: [second],
      mergeCommit: second,
      head: "e".repeat(40),
    };
    app.mock.api.get(`${REPO_PATH}/pulls/8`).reply(200, apiPull(pr8));
    const rt = app.parts.runtimes.all()[0];
    assert.ok(rt);
    const deployed = (await rt.reconciler.store.load(rt.reconciler.controller("prod").instance))
      .lastSyncedRevision;
    mockRange(app.mock, {
      ...(deployed ? { base: deployed } : {}),
      head: second,
      commits: [{ sha: second, author: "alice" }],
      pulls: [pr8],
    });
    const reply = mockReply(app.mock, 8);
    const writes: Captured = { checks: [], statuses: [], deployments: [] };
    // prod's waiting check run of this commit is updated with the refusal.
    app.mock.api
      .patch(/\/check-runs\/9\d{3}$/, (b: Captured["checks"][number]) => {
        writes.checks.push(b);
        return true;
      })
      .reply(200, (uri: string) => ({
        id: Number(uri.split("/").at(-1)),
        html_url: "https://github.com/acme/shop/runs/1",
      }));
    captureGitHubWrites(app.mock, { prod: 303 }, writes, { checks: 0, statuses: { prod: 1 } });
    const event = issueCommentEvent({
      body: "/approve prod",
      sender: { login: "carol" },
      commentId: 1006,
      number: 8,
    });
    (event.payload.issue.user as { login: string }).login = "bob";
    await app.probot.receive(event);
    await app.settle();
    app.mock.assertDone();
    assert.match(
      reply.body(),
      /Approved `[0-9a-f]{7}` for \*\*prod\*\* \(1\/1\), but the sync is `refused: frozen by @alice/,
    );
    assert.doesNotMatch(reply.body(), /deploying/);
    assert.match(writes.checks[0]?.output?.title ?? "", /^Refused: frozen by @alice .*\(release night\)/);
    assert.deepEqual(
      writes.statuses.map((s) => [s.id, s.state]),
      [[303, "failure"]],
    );
    assert.match(writes.statuses[0]?.description ?? "", /refused: frozen by @alice/);
    const live = (await cluster.client.get("v1", "ConfigMap", prodNs, "settings")) as unknown as {
      data: { release: string };
    };
    assert.equal(live.data.release, "1.27", "nothing deployed while frozen");
  });

  it("/unapprove withdraws an approval the refused sync did not use; a second /unapprove has nothing to withdraw", async () => {
    const second = repo.head();
    const rt = app.parts.runtimes.all()[0];
    assert.ok(rt);
    const prod = rt.reconciler.controller("prod");
    const approvals = async () => (await rt.reconciler.store.load(prod.instance)).pendingApprovals;
    assert.deepEqual(
      (await approvals()).map((a) => [a.sha, a.by, typeof a.id]),
      [[second, "carol", "number"]],
      "carol's approval is kept with her GitHub id",
    );
    for (const [commentId, expected] of [
      [1007, /@carol withdrew their approval of `[0-9a-f]{7}` for \*\*prod\*\*; it no longer counts\./],
      [1008, /@carol has no approval of \*\*prod\*\* to withdraw\./],
    ] as const) {
      mockReactions(app.mock, commentId, "rocket");
      mockPermission(app.mock, "carol", "write");
      const reply = mockReply(app.mock, 8);
      await app.probot.receive(
        issueCommentEvent({ body: "/unapprove prod", sender: { login: "carol" }, commentId, number: 8 }),
      );
      await app.settle();
      app.mock.assertDone();
      assert.match(reply.body(), expected);
    }
    assert.deepEqual(await approvals(), []);
  });

  it("a pull request gets a preview of merging it (dev only: prod's previews are opt-in), with no buttons", async () => {
    const base = repo.head();
    const head = repo.commit({ "dev/app.yaml": manifests("1.29") }, "pr change");
    repo.git("reset", "-q", "--hard", "HEAD~1");
    const merge = testMerge(repo, base, head);
    mockPullFiles(app.mock, 8, ["dev/app.yaml"]);
    mockPull(app.mock, 8, { head, mergeCommit: merge });
    mockTarball(app.mock, repo, merge);
    captureGitHubWrites(app.mock, {}, captured, { checks: 1, statuses: {} });
    await app.probot.receive(
      pullRequestEvent("opened", { number: 8, headSha: head, sender: { login: "alice" } }),
    );
    await app.settle();
    app.mock.assertDone();
    const previews = captured.checks.filter((c) => c.head_sha === head);
    assert.deepEqual(
      previews.map((c) => c.name),
      ["syncward preview / dev"],
      "prod (production, approval) is not previewed",
    );
    const dev = previews[0];
    assert.match(dev?.output?.title ?? "", /^Preview: 0 to create, 2 to change, 0 to prune$/);
    assert.match(dev?.output?.summary ?? "", /nginx:1\.29/);
    // Named by the pull request's head, never by GitHub's test merge (which is on no branch).
    assert.match(dev?.output?.summary ?? "", new RegExp(head.slice(0, 7)));
    assert.doesNotMatch(dev?.output?.summary ?? "", new RegExp(merge.slice(0, 7)));
    assert.equal((dev as { actions?: unknown }).actions, undefined, "a preview has no Sync button");
    assert.equal(
      (
        (await cluster.client.get("v1", "ConfigMap", devNs, "settings")) as unknown as {
          data: { release: string };
        }
      ).data.release,
      "1.27",
      "a preview changes nothing",
    );
  });

  it("a pull request from a fork gets no preview: nothing is read from the cluster", async () => {
    mockPullFiles(app.mock, 9, ["dev/app.yaml"]);
    const seen = app.mock.requests.length + 1;
    await app.probot.receive(
      pullRequestEvent("opened", {
        number: 9,
        headSha: "f".repeat(40),
        fork: true,
        sender: { login: "mallory" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
    assert.equal(app.mock.requests.length, seen, "no request but the config check's list of files");
  });
});
