// Which repositories syncward runs for follows the installation's life at once: installed or
// unsuspended starts them, uninstalled or suspended stops them, repositories added or removed,
// archived or deleted start or stop one by one, and a reinstall's new installation id is used.
// Payloads start from GitHub's own examples; requests are validated against its OpenAPI description.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockConfig, mockPermission, mockReactions, mockReply, REPO_PATH } from "../support/app.ts";
import { useOfflineApp } from "../support/comment-app.ts";
import {
  installationEvent,
  installationRepositoriesEvent,
  issueCommentEvent,
  repositoryEvent,
} from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: dev
    source: {path: dev}
    destination: {namespace: shop-dev}
`;

const app = useOfflineApp();
const running = () =>
  app()
    .parts.runtimes.all()
    .map((r) => `${r.info.owner}/${r.info.repo}@${r.info.installationId}`);

/** A `/help` comment starts the repository's runtime (config read once). */
async function startByComment(installationId: number, commentId = 1001, readConfig = true): Promise<void> {
  if (readConfig) mockConfig(app().mock, CONFIG);
  mockPermission(app().mock, "alice", "read");
  mockReactions(app().mock, commentId, "rocket");
  mockReply(app().mock, 7);
  await app().probot.receive(
    issueCommentEvent({ body: "/help", sender: { login: "alice", type: "User" }, commentId, installationId }),
  );
  app().mock.assertDone();
}

const repository = {
  id: 1,
  name: "shop",
  full_name: "acme/shop",
  owner: { login: "acme" },
  html_url: "https://github.com/acme/shop",
  default_branch: "main",
  archived: false,
};

describe("installation lifecycle", () => {
  it("after an uninstall and a reinstall, the repository uses its new installation id", async () => {
    await startByComment(1);
    assert.deepEqual(running(), ["acme/shop@1"]);
    await startByComment(2, 1002, false);
    assert.deepEqual(running(), ["acme/shop@2"], "the same runtime, now with the new id");
  });

  it("an uninstall stops every repository of that installation, asking GitHub nothing", async () => {
    await startByComment(1);
    const seen = app().mock.requests.length;
    await app().probot.receive(installationEvent("deleted", { installationId: 1 }));
    assert.deepEqual(running(), []);
    assert.equal(app().mock.requests.length, seen);
  });

  it("an installation of another id stops nothing", async () => {
    await startByComment(1);
    await app().probot.receive(installationEvent("suspend", { installationId: 99 }));
    assert.deepEqual(running(), ["acme/shop@1"]);
  });

  it("suspend stops; unsuspend starts every repository with a config at once", async () => {
    await startByComment(1);
    await app().probot.receive(installationEvent("suspend", { installationId: 1 }));
    assert.deepEqual(running(), []);
    app()
      .mock.api.get("/installation/repositories")
      .query(true)
      .reply(200, {
        total_count: 2,
        repositories: [repository, { ...repository, id: 2, name: "docs", full_name: "acme/docs" }],
      });
    mockConfig(app().mock, CONFIG);
    app()
      .mock.api.get(/\/repos\/acme\/docs\/contents\/\.github(%2F|\/)syncward\.ya?ml/)
      .query(true)
      .times(2)
      .reply(404, { message: "Not Found" });
    await app().probot.receive(installationEvent("unsuspend", { installationId: 1 }));
    app().mock.assertDone();
    assert.deepEqual(running(), ["acme/shop@1"], "docs has no config");
  });

  it("a repository added to the installation starts at once; removed, it stops", async () => {
    app().mock.api.get(REPO_PATH).reply(200, repository);
    mockConfig(app().mock, CONFIG);
    await app().probot.receive(installationRepositoriesEvent("added", ["acme/shop"], { installationId: 1 }));
    app().mock.assertDone();
    assert.deepEqual(running(), ["acme/shop@1"]);
    await app().probot.receive(
      installationRepositoriesEvent("removed", ["acme/shop"], { installationId: 1 }),
    );
    assert.deepEqual(running(), []);
  });

  it("an archived repository stops, and starts again when unarchived", async () => {
    await startByComment(1);
    await app().probot.receive(repositoryEvent("archived", { installationId: 1 }));
    assert.deepEqual(running(), []);
    mockConfig(app().mock, CONFIG);
    await app().probot.receive(repositoryEvent("unarchived", { installationId: 1 }));
    app().mock.assertDone();
    assert.deepEqual(running(), ["acme/shop@1"]);
  });

  it("a deleted repository stops", async () => {
    await startByComment(1);
    await app().probot.receive(repositoryEvent("deleted", { installationId: 1 }));
    assert.deepEqual(running(), []);
  });
});
