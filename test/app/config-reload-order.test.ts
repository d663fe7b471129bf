// Config pushes read in order (third review, D): each reload reads the config at its push's
// commit, a reload arriving while one is in flight waits for it rather than merging into it, and
// a reload of a commit older than the config in force (webhooks out of order) is dropped.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { offlineRuntimes, REPO_PATH } from "../support/app.ts";
import { mockGitHub } from "../support/github.ts";

const mock = mockGitHub();
afterEach(() => mock.reset());

const C1 = "1".repeat(40);
const C2 = "2".repeat(40);
const info = {
  id: 4711,
  owner: "acme",
  repo: "shop",
  installationId: 77,
  htmlUrl: "https://github.com/acme/shop",
  defaultBranch: "main",
};
const configAt = (sha: string, namespace: string) =>
  mock.api
    .get(/\/repos\/acme\/shop\/contents\/\.github(%2F|\/)syncward\.yml/)
    .query({ ref: sha })
    .reply(200, {
      type: "file",
      encoding: "base64",
      name: "syncward.yml",
      path: ".github/syncward.yml",
      content: Buffer.from(
        `environments:\n  - {name: prod, source: {path: .}, destination: {namespace: ${namespace}}}\n`,
      ).toString("base64"),
      sha: "0".repeat(40),
      size: 80,
    });
const compare = (base: string, head: string, status: "ahead" | "behind") =>
  mock.api
    .get(`${REPO_PATH}/compare/${base}...${head}`)
    .query({ per_page: "1" })
    .reply(200, { status, total_commits: 1, commits: [] });

describe("config reloads on pushes", () => {
  it("two overlapping reloads: the second waits for the first, and the config in force is C2's, read at C2", async () => {
    const all = await offlineRuntimes();
    configAt(C1, "one");
    compare(C1, C2, "ahead");
    configAt(C2, "two");
    const [first, second] = await Promise.all([all.for(info, true, C1), all.for(info, true, C2)]);
    mock.assertDone();
    assert.equal(first?.config.environments[0]?.destination.namespace, "one");
    const env = second?.config.environments[0];
    assert.equal(env?.configRevision, C2);
    assert.equal(env?.destination.namespace, "two", "the content is C2's, not the branch head's");
    assert.equal(all.all().length, 1);
    assert.equal(all.all()[0], second);
  });

  it("a reload of a commit older than the config in force (a webhook out of order) is dropped", async () => {
    const all = await offlineRuntimes();
    configAt(C2, "two");
    const inForce = await all.for(info, true, C2);
    compare(C2, C1, "behind");
    const late = await all.for(info, true, C1);
    mock.assertDone();
    assert.equal(late, inForce, "the runtime of C2 stays");
    assert.equal(late?.config.environments[0]?.configRevision, C2);
    assert.equal(late?.config.environments[0]?.destination.namespace, "two");
  });
});
