// After a restart the app finds every installed repository with a config and starts its loop,
// rather than waiting for the next webhook.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { bootstrap } from "../../src/github/app.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { offlineRuntimes } from "../support/app.ts";
import { createTestProbot, mockGitHub } from "../support/github.ts";

const mock = mockGitHub();
afterEach(() => mock.reset());

const repo = (name: string) => ({
  id: name.length,
  name,
  full_name: `acme/${name}`,
  owner: { login: "acme" },
  html_url: `https://github.com/acme/${name}`,
  default_branch: "main",
});

describe("bootstrap", () => {
  it("starts the repositories that have a config and skips those without", async () => {
    const probot = await createTestProbot();
    const runtimes = await offlineRuntimes(probot);
    mock.api
      .get("/app/installations")
      .query(true)
      .reply(200, [{ id: 77, account: { login: "acme" } }]);
    mock.api
      .get("/installation/repositories")
      .query(true)
      .reply(200, { total_count: 2, repositories: [repo("shop"), repo("docs")] });
    mock.api
      .get(/\/repos\/acme\/shop\/contents\/\.github(%2F|\/)syncward\.yml/)
      .query(true)
      .reply(200, {
        type: "file",
        encoding: "base64",
        content: Buffer.from(
          "environments:\n  - {name: dev, source: {path: .}, destination: {namespace: shop}}\n",
        ).toString("base64"),
      });
    // Neither .github/syncward.yml nor .github/syncward.yaml.
    mock.api
      .get(/\/repos\/acme\/docs\/contents\/\.github(%2F|\/)syncward\.ya?ml/)
      .query(true)
      .times(2)
      .reply(404, { message: "Not Found" });
    const started = await bootstrap(
      probot,
      runtimes,
      async () => (await probot.auth()) as unknown as Octokit,
    );
    mock.assertDone();
    assert.deepEqual(started, ["acme/shop"]);
    assert.equal(runtimes.all().length, 1);
    assert.deepEqual(
      runtimes.all()[0]?.config.environments.map((e) => e.name),
      ["dev"],
    );
  });
});
