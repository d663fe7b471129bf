// The default branch's config is re-read on the poll, not only on push webhooks: a lost push
// that added approval to prod still tightens the rule at the next poll; an idle poll reads only
// the branch head; an unparsable config keeps the config in force and fails `syncward / config`
// on its commit with the parse error, once. Requests are validated against GitHub's OpenAPI.
import assert from "node:assert/strict";
import { afterEach, mock as clock, describe, it } from "node:test";
import { offlineRuntimes, REPO_PATH } from "../support/app.ts";
import { mockGitHub } from "../support/github.ts";

const mock = mockGitHub();
afterEach(() => {
  mock.reset();
  clock.timers.reset();
});
/** The source trusts a branch head it read for a minute (github-source.ts); a poll comes later. */
const nextPoll = () => clock.timers.tick(61_000);
const startClock = () => clock.timers.enable({ apis: ["Date"], now: Date.now() });

const C1 = "1".repeat(40);
const C2 = "2".repeat(40);
const C3 = "3".repeat(40);
const info = {
  owner: "acme",
  repo: "shop",
  id: 4711,
  installationId: 77,
  htmlUrl: "https://github.com/acme/shop",
  defaultBranch: "main",
};
const LOOSE = "environments:\n  - {name: prod, source: {path: .}, destination: {namespace: shop}}\n";
const TIGHT =
  "environments:\n  - {name: prod, source: {path: .}, destination: {namespace: shop}, approval: {users: [carol]}}\n";
const BROKEN = "environments:\n  - {name: prod, source: {path: .}, destinaton: {namespace: shop}}\n";

const configAt = (ref: string, text: string) =>
  mock.api
    .get(/\/repos\/acme\/shop\/contents\/\.github(%2F|\/)syncward\.yml/)
    .query({ ref })
    .reply(200, {
      type: "file",
      encoding: "base64",
      name: "syncward.yml",
      path: ".github/syncward.yml",
      content: Buffer.from(text).toString("base64"),
      sha: "0".repeat(40),
      size: text.length,
    });
const headIs = (sha: string) =>
  mock.api.get(`${REPO_PATH}/branches/main`).reply(200, { name: "main", commit: { sha }, protected: false });

describe("the default branch's config on the poll", () => {
  it("a lost config push still tightens the rule at the next poll; an idle poll reads only the head", async () => {
    const all = await offlineRuntimes();
    startClock();
    configAt("main", LOOSE);
    const loose = await all.for(info);
    assert.equal(loose?.config.environments[0]?.approval, undefined);
    // The first poll learns the head the config in force is at (same text: nothing rebuilt).
    headIs(C1);
    configAt(C1, LOOSE);
    assert.equal(await all.configPoll.poll(info), "same text");
    assert.equal(all.all()[0], loose);
    // A push that added approval to prod, whose webhook never came.
    nextPoll();
    headIs(C2);
    configAt(C2, TIGHT); // read by the poll, and again by the reload (as a push's is)
    configAt(C2, TIGHT);
    assert.equal(await all.configPoll.poll(info), "reloaded");
    const tight = all.all()[0];
    assert.notEqual(tight, loose);
    assert.deepEqual(tight?.config.environments[0]?.approval?.users, ["carol"]);
    assert.equal(tight?.config.environments[0]?.configRevision, C2);
    // Idle: the head has not moved, so the config is not fetched (nock has no reply for it).
    nextPoll();
    headIs(C2);
    assert.equal(await all.configPoll.poll(info), "unchanged");
    mock.assertDone();
  });

  it("an unparsable config keeps the stricter config in force and fails the check on its commit, once", async () => {
    const all = await offlineRuntimes();
    startClock();
    configAt("main", TIGHT);
    const tight = await all.for(info);
    headIs(C2);
    configAt(C2, BROKEN);
    configAt(C2, BROKEN);
    let check:
      | { name: string; head_sha: string; conclusion: string; output: { summary: string } }
      | undefined;
    mock.api
      .post(`${REPO_PATH}/check-runs`, (body) => {
        check = body;
        return true;
      })
      .reply(201, { id: 5 });
    assert.equal(await all.configPoll.poll(info), "invalid");
    assert.equal(all.all()[0], tight, "the config in force stays");
    assert.deepEqual(all.all()[0]?.config.environments[0]?.approval?.users, ["carol"]);
    assert.equal(check?.name, "syncward / config");
    assert.equal(check?.head_sha, C2);
    assert.equal(check?.conclusion, "failure");
    assert.match(check?.output.summary ?? "", /destinaton/);
    assert.match(check?.output.summary ?? "", /last valid configuration .* stays in force/);
    // Another commit with the same broken file: read (the head moved), not reported again.
    nextPoll();
    headIs(C3);
    configAt(C3, BROKEN);
    assert.equal(await all.configPoll.poll(info), "invalid");
    mock.assertDone();
  });

  it("GitHub unreachable on a poll: the config in force stays, and the next poll asks again", async () => {
    const all = await offlineRuntimes();
    configAt("main", TIGHT);
    const tight = await all.for(info);
    mock.api.get(`${REPO_PATH}/branches/main`).reply(502, { message: "Bad Gateway" });
    assert.equal(await all.configPoll.poll(info), "unreadable");
    assert.equal(all.all()[0], tight);
    headIs(C1);
    configAt(C1, TIGHT);
    assert.equal(await all.configPoll.poll(info), "same text");
    mock.assertDone();
  });
});
