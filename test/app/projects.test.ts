// The operator's projects on GitHub: a repository no project covers gets one check run on its
// default branch's head explaining which rule is missing, and deploys nothing; membership through
// an organization custom property is read from GitHub's API and counts only where the organization
// alone may set it; team access and a bare glob gain nothing.
// The cluster is unreachable: nothing here may touch it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { mockConfig, mockPull, REPO_PATH, startApp, unreachableClient } from "../support/app.ts";
import { mockRefusal } from "../support/comment-app.ts";
import type { GitHubMock } from "../support/github.ts";
import type { CheckRun } from "../support/github-checks.ts";
import { fakeSha, issueCommentEvent, pullRequestEvent, pushEvent } from "../support/webhooks.ts";

const CONFIG =
  "environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: team-a-dev}\n";
const HEAD = fakeSha("default branch head");

const projects = (list: unknown[]) => stringify({ projects: list });
const payments = { name: "payments", repositories: ["acme/pay-*"], destinations: [{ namespace: "pay-*" }] };
const byProperty = { name: "team-a", properties: { team: "a" }, destinations: [{ namespace: "team-a-*" }] };

function mockHead(mock: GitHubMock, times = 1): void {
  mock.api
    .get(`${REPO_PATH}/branches/main`)
    .times(times)
    .reply(200, { name: "main", commit: { sha: HEAD }, protected: false });
}

/** GitHub's answers for the custom property `team`: its definition, then (if asked) the repository's values. */
function mockProperty(mock: GitHubMock, editableBy: string, values?: unknown[]): void {
  mock.api
    .get("/orgs/acme/properties/schema/team")
    .reply(200, { property_name: "team", value_type: "string", values_editable_by: editableBy });
  if (values) mock.api.get(`${REPO_PATH}/properties/values`).reply(200, values as object);
}

function captureCheckRuns(mock: GitHubMock): CheckRun[] {
  const runs: CheckRun[] = [];
  mock.api
    .post(`${REPO_PATH}/check-runs`, (body: CheckRun) => {
      runs.push(body);
      return true;
    })
    .reply(201, { id: 1 });
  return runs;
}

describe("projects on GitHub", () => {
  it("a repository no project covers gets one check run on its default branch's head, however many events follow", async () => {
    const app = await startApp({ client: unreachableClient(), projects: projects([payments]) });
    try {
      mockConfig(app.mock, CONFIG, 2);
      mockHead(app.mock, 2);
      const runs = captureCheckRuns(app.mock);
      await app.probot.receive(pushEvent({ ref: "feature" }));
      await app.probot.receive(issueCommentEvent({ body: "/sync dev", commentId: 1001 }));
      app.mock.assertDone();
      assert.equal(runs.length, 1);
      const [run] = runs;
      assert.equal(run?.name, "syncward / project");
      assert.equal(run?.head_sha, HEAD);
      assert.equal(run?.conclusion, "failure");
      assert.equal(run?.output?.title, "This repository belongs to no syncward project");
      assert.match(
        run?.output?.summary ?? "",
        /acme\/shop belongs to no project, so syncward deploys nothing of it\. No project's rule covers it: payments \(repositories acme\/pay-\*\)\. The operator adds "acme\/shop" to a project's repositories/,
      );
      assert.deepEqual(app.parts.runtimes.all(), [], "no reconciler runs for it");
    } finally {
      await app.parts.runtimes.stop();
      app.mock.reset();
    }
  });

  describe("membership only from what the operator controls", () => {
    it("an organization custom property only the organization may set makes the repository a member", async () => {
      const app = await startApp({ client: unreachableClient(), projects: projects([byProperty]) });
      try {
        mockConfig(app.mock, CONFIG);
        mockProperty(app.mock, "org_actors", [{ property_name: "team", value: "a" }]);
        await app.probot.receive(pushEvent({ ref: "feature" }));
        app.mock.assertDone();
        const [rt] = app.parts.runtimes.all();
        assert.equal(rt?.config.environments[0]?.project?.name, "team-a");
        assert.deepEqual(rt?.config.environments[0]?.project?.violations, []);
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    });

    it("a property repository admins may set decides nothing: refused with its cause, nothing deploys", async () => {
      const app = await startApp({ client: unreachableClient(), projects: projects([byProperty]) });
      try {
        mockConfig(app.mock, CONFIG);
        mockProperty(app.mock, "org_and_repo_actors");
        mockHead(app.mock);
        const runs = captureCheckRuns(app.mock);
        await app.probot.receive(pushEvent({ ref: "feature" }));
        app.mock.assertDone();
        assert.equal(runs.length, 1);
        assert.match(
          runs[0]?.output?.summary ?? "",
          /project team-a: custom property team may be set by repository admins \(values_editable_by: org_and_repo_actors\), so it cannot decide membership.*Until it can be read, syncward cannot tell whether this repository belongs to project team-a, so it deploys nothing of it\./s,
        );
        assert.deepEqual(app.parts.runtimes.all(), []);
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    });

    it("a repository admin granting a team access gains nothing: teams are not accepted, nothing deploys", async () => {
      const app = await startApp({
        client: unreachableClient(),
        projects: projects([{ ...byProperty, teams: ["acme/platform"] }]),
      });
      try {
        mockConfig(app.mock, CONFIG);
        mockHead(app.mock);
        const runs = captureCheckRuns(app.mock);
        await app.probot.receive(pushEvent({ ref: "feature" }));
        app.mock.assertDone();
        assert.match(
          runs[0]?.output?.summary ?? "",
          /projects\[0\]\.teams: is no longer accepted: a repository admin can grant any team access/,
        );
        assert.deepEqual(app.parts.runtimes.all(), []);
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    });

    it("a newly created repository whose name matches another team's glob gains nothing", async () => {
      const glob = { name: "team-a", repositories: ["acme/sh*"], destinations: [{ namespace: "team-a-*" }] };
      const app = await startApp({ client: unreachableClient(), projects: projects([glob]) });
      try {
        mockConfig(app.mock, CONFIG);
        mockHead(app.mock);
        const runs = captureCheckRuns(app.mock);
        await app.probot.receive(pushEvent({ ref: "feature" }));
        app.mock.assertDone();
        assert.match(
          runs[0]?.output?.summary ?? "",
          /glob acme\/sh\* matches the name, but anyone who may create repositories chooses names/,
        );
        assert.deepEqual(app.parts.runtimes.all(), []);
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    });
  });

  it("a project's forkPreviews: never floor refuses /diff on a fork's pull request, even to an admin", async () => {
    const floor = {
      name: "team-a",
      properties: { team: "a" },
      destinations: [{ namespace: "team-a-*" }],
      floors: { forkPreviews: "never" },
    };
    const app = await startApp({ client: unreachableClient(), projects: projects([floor]) });
    try {
      mockProperty(app.mock, "org_actors", [{ property_name: "team", value: "a" }]);
      const reply = mockRefusal(app.mock, CONFIG, { login: "olga", permission: "admin" });
      mockPull(app.mock, 7, { head: "c".repeat(40), mergeCommit: "d".repeat(40), fork: true });
      await app.probot.receive(
        issueCommentEvent({ body: "/diff dev", sender: { login: "olga", type: "User" }, commentId: 1001 }),
      );
      app.mock.assertDone();
      assert.match(reply.body(), /does not preview pull requests from forks against the live cluster/);
    } finally {
      await app.parts.runtimes.stop();
      app.mock.reset();
    }
  });

  it("an invalid projects document holds the repository, on the project check run, naming the field", async () => {
    const app = await startApp({
      client: unreachableClient(),
      projects: "projects: [{name: a, repos: [acme/shop], destinations: [{namespace: x}]}]\n",
    });
    try {
      mockConfig(app.mock, CONFIG);
      mockHead(app.mock);
      const runs = captureCheckRuns(app.mock);
      await app.probot.receive(pushEvent({ ref: "feature" }));
      app.mock.assertDone();
      assert.equal(runs[0]?.name, "syncward / project");
      assert.match(
        runs[0]?.output?.summary ?? "",
        /the operator's projects cannot be read, so syncward deploys nothing until they are fixed:\nprojects\.yaml: projects\[0\]\.repos: unknown field \(did you mean "repositories"\?\)/,
      );
      assert.deepEqual(app.parts.runtimes.all(), []);
    } finally {
      await app.parts.runtimes.stop();
      app.mock.reset();
    }
  });

  describe("a pull request that changes the configuration, checked under the project", () => {
    const MAIN =
      "environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: team-a-dev}\n    previews: false\n    production: true\n";
    const strict = {
      name: "team-a",
      properties: { team: "a" },
      destinations: [{ namespace: "team-a-*" }],
      syncWindows: [{ kind: "deny", schedule: "0 22 * * 5", duration: "60h" }],
      floors: { productionApprovals: 2 },
    };
    const PR_HEAD = "e".repeat(40);

    async function checkOf(proposed: string): Promise<CheckRun | undefined> {
      const app = await startApp({ client: unreachableClient(), projects: projects([strict]) });
      try {
        app.mock.api
          .get(`${REPO_PATH}/pulls/7/files`)
          .query(true)
          .reply(200, [{ filename: ".github/syncward.yml", status: "modified" }]);
        app.mock.api
          .get(/\/contents\/\.github(%2F|\/)syncward\.yml/)
          .query({ ref: PR_HEAD })
          .reply(200, {
            type: "file",
            encoding: "base64",
            name: "syncward.yml",
            path: ".github/syncward.yml",
            content: Buffer.from(proposed).toString("base64"),
          });
        mockConfig(app.mock, MAIN);
        mockProperty(app.mock, "org_actors", [{ property_name: "team", value: "a" }]);
        const runs = captureCheckRuns(app.mock);
        await app.probot.receive(pullRequestEvent("opened", { number: 7, headSha: PR_HEAD }));
        app.mock.assertDone();
        return runs[0];
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    }

    it("a destination outside the project fails the config check before merge", async () => {
      const run = await checkOf(MAIN.replace("team-a-dev", "kube-system"));
      assert.equal(run?.name, "syncward / config");
      assert.equal(run?.conclusion, "failure");
      assert.equal(run?.output?.title, "Outside project team-a: 1 problem(s)");
      assert.match(
        run?.output?.summary ?? "",
        /dev: destination\.namespace "kube-system" is outside project team-a/,
      );
    });

    it("the project's own windows and floors are not mistaken for changes the pull request makes", async () => {
      const run = await checkOf(`${MAIN}    pollInterval: 1m\n`);
      assert.equal(run?.conclusion, "success", run?.output?.summary);
      assert.equal(run?.output?.title, "Valid; changes 1 environment(s)");
      assert.match(run?.output?.summary ?? "", /- `environments\[dev\]\.pollInterval: 180000 → 60000`/);
      assert.doesNotMatch(run?.output?.summary ?? "", /environments\[dev\]\.(syncWindows|approval)/);
      assert.match(run?.output?.summary ?? "", /- `dev`: .*\(unchanged\)/, "its approvers, unchanged");
    });
  });

  it("without projects, a repository deploys as before (no team lookup, no project check)", async () => {
    const app = await startApp({ client: unreachableClient() });
    try {
      mockConfig(app.mock, CONFIG);
      await app.probot.receive(pushEvent({ ref: "feature" }));
      app.mock.assertDone();
      const [rt] = app.parts.runtimes.all();
      assert.equal(rt?.config.environments[0]?.project, undefined);
    } finally {
      await app.parts.runtimes.stop();
      app.mock.reset();
    }
  });
});
