// Checks finishing (check_suite.completed, status) never start a repository, and syncward knows its
// own suites: by APP_ID when Probot runs as an app, else by what GitHub says it is, else by its
// slug. No cluster: a woken environment would have to reach one (the e2e test covers that).
// GitHub is nock; every request is validated against GitHub's OpenAPI description.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { ownAppOf } from "../../src/github/checks-completed.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { startApp, type TestApp, unreachableClient } from "../support/app.ts";
import { createTestProbot, type GitHubMock, mockGitHub } from "../support/github.ts";
import { checkSuiteCompletedEvent, fakeSha, statusEvent } from "../support/webhooks.ts";

let gh: GitHubMock | undefined;
let app: TestApp | undefined;
afterEach(async () => {
  await app?.parts.runtimes.stop();
  app?.mock.reset();
  gh?.reset();
  app = undefined;
  gh = undefined;
});

const appClient = async () => {
  const probot = await createTestProbot();
  return (await probot.auth()) as unknown as Octokit;
};

describe("checks finishing", () => {
  it("a repository not running here is not started by a suite or a status (nothing is read)", async () => {
    app = await startApp({ client: unreachableClient() });
    await app.probot.receive(checkSuiteCompletedEvent({ headSha: fakeSha("ci") }));
    await app.probot.receive(statusEvent({ sha: fakeSha("ci") }));
    app.mock.assertDone(); // a runtime would have read .github/syncward.yml
    assert.equal(app.parts.runtimes.all().length, 0);
  });

  it("syncward is known by APP_ID without asking GitHub", async (t) => {
    gh = mockGitHub();
    t.after(() => {
      delete process.env.APP_ID;
    });
    process.env.APP_ID = "31337";
    assert.deepEqual(await ownAppOf(appClient)(), { id: 31337, slug: "syncward" });
    gh.assertDone();
  });

  it("else by the authenticated app, asked once", async () => {
    gh = mockGitHub();
    gh.api.get("/app").reply(200, { id: 4711, slug: "acme-syncward", name: "acme-syncward" });
    const own = ownAppOf(appClient);
    assert.deepEqual(await own(), { id: 4711, slug: "acme-syncward" });
    assert.deepEqual(await own(), { id: 4711, slug: "acme-syncward" });
    gh.assertDone();
  });

  it("else, when GitHub will not say, by the slug syncward", async () => {
    gh = mockGitHub();
    gh.api.get("/app").reply(401, { message: "A JSON web token could not be decoded" });
    assert.deepEqual(await ownAppOf(appClient)(), { slug: "syncward" });
    gh.assertDone();
  });
});
