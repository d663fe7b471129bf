// requireChecks' GitHub adapter: which required checks have not passed on a commit, read from the
// check runs and the combined status of the commit (and, for `true`, the branch's protection and
// rulesets).
// GitHub is nock; every request is validated against GitHub's OpenAPI description.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Octokit } from "../../src/github/octokit.ts";
import { GitHubRequiredChecks } from "../../src/github/required-checks.ts";
import { createTestProbot, type GitHubMock, mockGitHub } from "../support/github.ts";
import { mockCommitChecks } from "../support/github-checks.ts";

const SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const REPO = "/repos/acme/shop";

let gh: GitHubMock | undefined;
afterEach(() => gh?.reset());

async function adapter(): Promise<GitHubRequiredChecks> {
  const probot = await createTestProbot();
  const octokit = (await probot.auth(4242)) as unknown as Octokit;
  return new GitHubRequiredChecks(async () => octokit, { owner: "acme", repo: "shop" });
}

/** GitHub Actions' app id (its slug is github-actions). */
const ACTIONS = 15368;

/** A check run; `suite`: its check suite (a re-run of a job is a newer run in the same suite). */
const run = (
  id: number,
  name: string,
  status: string,
  conclusion: string | null,
  appId = ACTIONS,
  suite = 1000 + id,
) => ({
  id,
  name,
  head_sha: SHA,
  status,
  conclusion,
  app: { id: appId, slug: appId === ACTIONS ? "github-actions" : `app-${appId}` },
  check_suite: { id: suite },
});

function mockChecks(
  mock: GitHubMock,
  runs: ReturnType<typeof run>[],
  statuses: Array<{ context: string; state: string }>,
) {
  mockCommitChecks(mock, SHA, runs, statuses);
}

/** `main` protected with these required contexts and checks (each with the app it is pinned to). */
function mockProtection(
  mock: GitHubMock,
  contexts: string[],
  checks: Array<{ context: string; app_id: number | null }>,
) {
  mock.api.get(`${REPO}/branches/main`).reply(200, {
    name: "main",
    protected: true,
    protection: {
      enabled: true,
      required_status_checks: { enforcement_level: "everyone", contexts, checks },
    },
  });
  mockRulesets(mock, []);
}

/** The rulesets that apply to `main` require these checks (integration_id: the app it is pinned to). */
function mockRulesets(mock: GitHubMock, checks: Array<{ context: string; integration_id?: number }>) {
  mock.api
    .get(`${REPO}/rules/branches/main`)
    .query(true)
    .reply(
      200,
      checks.length === 0
        ? []
        : [
            {
              type: "required_status_checks",
              ruleset_source_type: "Repository",
              ruleset_source: "acme/shop",
              ruleset_id: 7,
              parameters: { required_status_checks: checks, strict_required_status_checks_policy: false },
            },
          ],
    );
}

describe("required checks from GitHub", () => {
  it("names the checks that have not passed: failed, still running, never reported; a re-run that passed counts", async () => {
    gh = mockGitHub();
    mockChecks(
      gh,
      [
        run(1, "test", "completed", "failure"),
        run(2, "test", "completed", "success", ACTIONS, 1001),
        run(3, "lint", "completed", "failure"),
        run(4, "e2e", "in_progress", null),
        run(5, "docs", "completed", "skipped"),
      ],
      [
        { context: "ci/legacy", state: "success" },
        { context: "ci/deploy-preview", state: "pending" },
      ],
    );
    const missing = await (await adapter()).missing(
      SHA,
      ["test", "lint", "e2e", "docs", "ci/legacy", "ci/deploy-preview", "security"],
      "main",
    );
    gh.assertDone();
    assert.deepEqual(missing, ["lint", "e2e", "ci/deploy-preview", "security"]);
  });

  it("true: the branch's required status checks", async () => {
    gh = mockGitHub();
    mockProtection(
      gh,
      ["test"],
      [
        { context: "test", app_id: null },
        { context: "build", app_id: 1 },
      ],
    );
    mockChecks(gh, [run(1, "test", "completed", "success")], []);
    const missing = await (await adapter()).missing(SHA, true, "main");
    gh.assertDone();
    assert.deepEqual(missing, ["build"]);
  });

  it("a check branch protection pins to an app counts only from that app: not another app's run of the name, not a commit status", async () => {
    gh = mockGitHub();
    mockProtection(
      gh,
      ["ci", "lint"],
      [
        { context: "ci", app_id: 15368 },
        { context: "lint", app_id: -1 },
      ],
    );
    mockChecks(
      gh,
      [
        run(1, "ci", "completed", "failure", 15368),
        // Newer and green, but from a workflow of another app (anyone with write access can add one).
        run(2, "ci", "completed", "success", 999),
        run(3, "lint", "completed", "success", 999),
      ],
      [{ context: "ci", state: "success" }],
    );
    const missing = await (await adapter()).missing(SHA, true, "main");
    gh.assertDone();
    assert.deepEqual(missing, ["ci"]);
  });

  it("a check named alone counts any source, but is green only when none of them is failing or pending", async () => {
    gh = mockGitHub();
    mockChecks(
      gh,
      [
        run(1, "ci", "completed", "success"),
        // Another app's run of the same name that failed: "any source" includes it.
        run(2, "ci", "completed", "failure", 999),
        run(3, "build", "completed", "success"),
        run(4, "lint", "completed", "success"),
      ],
      [
        { context: "build", state: "pending" },
        { context: "lint", state: "success" },
        { context: "deploy", state: "error" },
      ],
    );
    const missing = await (await adapter()).missing(SHA, ["ci", "build", "lint", "deploy"], "main");
    gh.assertDone();
    assert.deepEqual(missing, ["ci", "build", "deploy"]);
  });

  it("a check pinned to an app ({name, app}) counts only that app's run: a spoofed success from another app or a status does not", async () => {
    gh = mockGitHub();
    mockChecks(
      gh,
      [
        // The pinned app's runs: still running, failed, passed after a failed first run.
        run(1, "ci", "in_progress", null),
        run(2, "test", "completed", "failure"),
        run(3, "lint", "completed", "failure"),
        run(4, "lint", "completed", "success", ACTIONS, 1003),
        // Newer and green, from another app (a workflow anyone with write could add), for each name.
        run(5, "ci", "completed", "success", 999),
        run(6, "test", "completed", "success", 999),
        run(7, "e2e", "completed", "success", 999),
      ],
      [
        { context: "ci", state: "success" },
        { context: "e2e", state: "success" },
      ],
    );
    const pinned = (name: string) => ({ name, app: "github-actions" });
    const missing = await (await adapter()).missing(
      SHA,
      [pinned("ci"), pinned("test"), pinned("lint"), pinned("e2e")],
      "main",
    );
    gh.assertDone();
    assert.deepEqual(missing, [
      "ci (from github-actions)",
      "test (from github-actions)",
      "e2e (from github-actions)",
    ]);
  });

  it("syncward's own check runs never satisfy a requirement, whatever they are named", async () => {
    gh = mockGitHub();
    mockChecks(
      gh,
      [
        run(1, "syncward / prod", "completed", "success"),
        run(2, "syncward preview / prod", "completed", "success"),
      ],
      [],
    );
    const missing = await (await adapter()).missing(
      SHA,
      ["syncward / prod", "syncward preview / prod"],
      "main",
    );
    gh.assertDone();
    assert.deepEqual(missing, ["syncward / prod", "syncward preview / prod"]);
  });

  it("true on a branch where neither protection nor a ruleset requires a check: reported missing, nothing deploys", async () => {
    gh = mockGitHub();
    gh.api.get(`${REPO}/branches/main`).reply(200, { name: "main", protected: false });
    mockRulesets(gh, []);
    assert.deepEqual(await (await adapter()).missing(SHA, true, "main"), [
      "no required checks found for main (neither branch protection nor a ruleset names one)",
    ]);
    gh.assertDone();
  });

  it("true on a branch protected by a ruleset only: the ruleset's required checks, pinned to their app", async () => {
    gh = mockGitHub();
    gh.api.get(`${REPO}/branches/main`).reply(200, { name: "main", protected: true });
    mockRulesets(gh, [{ context: "ci", integration_id: ACTIONS }, { context: "lint" }]);
    mockChecks(
      gh,
      [run(1, "ci", "completed", "success", 999), run(2, "lint", "completed", "success", 999)],
      [],
    );
    const missing = await (await adapter()).missing(SHA, true, "main");
    gh.assertDone();
    assert.deepEqual(missing, ["ci"], "a green ci from another app does not pass a check the ruleset pins");
  });

  it("a newer run of the same app outside the job's check suite does not hide a failing or pending run; a re-run in the suite does", async () => {
    gh = mockGitHub();
    mockChecks(
      gh,
      [
        // The real CI: failed, and still running.
        run(1, "ci", "completed", "failure", ACTIONS, 10),
        run(2, "build", "in_progress", null, ACTIONS, 11),
        // A workflow on another branch POSTed green runs of the same names on this commit.
        run(3, "ci", "completed", "success", ACTIONS, 20),
        run(4, "build", "completed", "success", ACTIONS, 20),
        // A job that failed and was re-run, green, in its own suite.
        run(5, "lint", "completed", "failure", ACTIONS, 12),
        run(6, "lint", "completed", "success", ACTIONS, 12),
      ],
      [],
    );
    const pinned = (name: string) => ({ name, app: "github-actions" });
    const missing = await (await adapter()).missing(SHA, ["ci", pinned("build"), pinned("lint")], "main");
    gh.assertDone();
    assert.deepEqual(missing, ["ci", "build (from github-actions)"]);
  });

  it("commit statuses are read page by page: a failing status past the first hundred counts", async () => {
    gh = mockGitHub();
    gh.api
      .get(`${REPO}/commits/${SHA}/check-runs`)
      .query({ filter: "all", per_page: "100" })
      .reply(200, { total_count: 0, check_runs: [] });
    const statuses = (from: number, n: number, state: string) =>
      Array.from({ length: n }, (_, i) => ({ context: `ctx-${from + i}`, state }));
    for (const [page, list] of [
      [1, statuses(0, 100, "success")],
      [2, [{ context: "deploy-check", state: "failure" }]],
    ] as const)
      gh.api
        .get(`${REPO}/commits/${SHA}/status`)
        .query({ per_page: "100", page: String(page) })
        .reply(200, { state: "failure", sha: SHA, total_count: 101, statuses: list });
    const missing = await (await adapter()).missing(SHA, ["ctx-0", "deploy-check"], "main");
    gh.assertDone();
    assert.deepEqual(missing, ["deploy-check"]);
  });
});
