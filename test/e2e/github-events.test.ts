// More of the GitHub App on the real cluster: a merged pull request's summary comment (edited in
// place), a manual environment's OutOfSync check run, invalid manifests as annotations at file
// and line, check-run buttons authorized like comments, and an invalid config reported on the commit.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { guardsOf } from "../../src/config/stricter.ts";
import {
  mockConfig,
  mockNoEarlierDeployments,
  mockPermission,
  mockPull,
  mockPullFiles,
  REPO_PATH,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo, testMerge } from "../support/git-repo.ts";
import {
  type CheckRun as Check,
  captureCheckRuns as captureChecks,
  mockTarball,
} from "../support/github-checks.ts";
import { checkRunEvent, pullRequestEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("GitHub App events end to end", () => {
  let app: TestApp;
  let repo: TestRepo;
  let autoNs: string;
  let manualNs: string;
  const checks: Check[] = [];

  before(async () => {
    autoNs = await cluster.namespace("ghe-auto");
    manualNs = await cluster.namespace("ghe-manual");
    const stateNs = await cluster.stateNamespace("ghe-state");
    repo = makeRepo({ "auto/cm.yaml": cm("1"), "manual/cm.yaml": cm("1") });
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(
      app.mock,
      `environments:
  - name: auto
    source: {path: auto}
    destination: {namespace: ${autoNs}}
    syncPolicy: {automated: {prune: true}}
  - name: manual
    source: {path: manual}
    destination: {namespace: ${manualNs}}
`,
    );
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  it("a merged pull request deploys and gets one summary comment; a manual environment gets an OutOfSync check run", async () => {
    const sha = repo.head();
    mockTarball(app.mock, repo, sha);
    // auto: its run created in progress, then completed; manual: one OutOfSync run.
    captureChecks(app.mock, checks, 2, 1);
    mockNoEarlierDeployments(app.mock, "auto");
    app.mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 11 });
    app.mock.api.post(`${REPO_PATH}/deployments/11/statuses`).times(2).reply(201, {});
    let comment = "";
    app.mock.api
      .post(`${REPO_PATH}/issues/12/comments`, (b: { body: string }) => {
        comment = b.body;
        return true;
      })
      .reply(201, { id: 4242 });
    await app.probot.receive(
      pullRequestEvent("closed", { number: 12, mergeCommitSha: sha, sender: { login: "alice" } }),
    );
    await app.settle();
    app.mock.assertDone();
    assert.ok(
      await cluster.client.get("v1", "ConfigMap", autoNs, "settings"),
      "the merge deployed the automated environment",
    );
    assert.equal(
      await cluster.client.get("v1", "ConfigMap", manualNs, "settings"),
      undefined,
      "the manual one waits",
    );
    assert.match(comment, /<!-- syncward:summary -->/);
    assert.match(comment, /\| `auto` \| Succeeded \|/);
    const manual = checks.find((c) => c.name === "syncward / manual");
    assert.equal(manual?.conclusion, "neutral");
    assert.match(manual?.output?.title ?? "", /^OutOfSync/);
    assert.match(manual?.output?.text ?? "", /\*\*Next:\*\* comment `\/sync manual`/);
    assert.match(manual?.output?.summary ?? "", /\+\+\+ desired\/\/ConfigMap:/);

    // The push that GitHub sends for the same merge changes nothing more: deduplicated by (SHA, environment).
    await app.probot.receive(
      pushEvent({
        after: sha,
        before: "0".repeat(40),
        modified: ["auto/cm.yaml"],
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
  });

  it("the Sync button on a check run is authorized like a comment, then syncs", async () => {
    const sha = repo.head();
    mockPermission(app.mock, "rita", "read");
    // The refusal goes on the run whose button was clicked: updated, not a second run.
    captureChecks(app.mock, checks, 0, 1);
    await app.probot.receive(
      checkRunEvent("requested_action", {
        identifier: "sync",
        name: "syncward / manual",
        headSha: sha,
        sender: { login: "rita" },
      }),
    );
    await app.settle();
    const manualRun = () => checks.filter((c) => c.name === "syncward / manual").at(-1);
    assert.match(
      manualRun()?.output?.summary ?? "",
      /@rita clicked \*\*sync\*\* but needs \*\*write\*\* permission \(has \*\*read\*\*\)\. Nothing was changed\./,
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", manualNs, "settings"), undefined);

    mockPermission(app.mock, "alice", "write");
    captureChecks(app.mock, checks, 1, 1);
    mockNoEarlierDeployments(app.mock, "manual");
    app.mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 12 });
    app.mock.api.post(`${REPO_PATH}/deployments/12/statuses`).times(2).reply(201, {});
    await app.probot.receive(
      checkRunEvent("requested_action", {
        identifier: "sync",
        name: "syncward / manual",
        headSha: sha,
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
    assert.ok(await cluster.client.get("v1", "ConfigMap", manualNs, "settings"), "synced by the button");
    assert.equal(manualRun()?.status, "completed");
    assert.equal(manualRun()?.conclusion, "success");
  });

  it("the Sync button on a frozen environment answers on the check run: refused, by whom and why", async () => {
    const sha = repo.head();
    const manual = app.parts.runtimes.all()[0]?.reconciler.controller("manual");
    assert.ok(manual);
    await manual.setFreeze({ by: "ops", reason: "incident 12" });
    try {
      mockPermission(app.mock, "alice", "write");
      captureChecks(app.mock, checks, 0, 1);
      // The merged pull request's summary comment shows the refusal too.
      let summary = "";
      app.mock.api
        .patch(`${REPO_PATH}/issues/comments/4242`, (b: { body: string }) => {
          summary = b.body;
          return true;
        })
        .reply(200, { id: 4242 });
      await app.probot.receive(
        checkRunEvent("requested_action", {
          identifier: "sync",
          name: "syncward / manual",
          headSha: sha,
          sender: { login: "alice" },
        }),
      );
      await app.settle();
      const run = () => checks.filter((c) => c.name === "syncward / manual").at(-1);
      // The summary comment is written after the check run, in the same report.
      await eventually(
        "the refusal reached the check run and the summary comment",
        async () => /^Refused/.test(run()?.output?.title ?? "") && summary !== "",
      );
      app.mock.assertDone();
      assert.match(run()?.output?.title ?? "", /^Refused: frozen by @ops since .* \(incident 12\)/);
      assert.match(summary, /\| `manual` \| Refused \|.*refused: frozen by `@ops`/);
    } finally {
      await manual.setFreeze(undefined);
    }
  });

  it("a button needs the stricter permission a pending config change is held to, like a comment", async () => {
    const sha = repo.head();
    const rt = app.parts.runtimes.all()[0];
    const manual = rt?.reconciler.controller("manual");
    assert.ok(rt && manual);
    await manual.setFreeze({ by: "ops", reason: "release night" });
    // Deployed under a config where unfreezing needed admin; the config now in force says less.
    await rt.reconciler.store.update(manual.instance, (s) => {
      s.deployedRules = {
        revision: sha,
        ...guardsOf(manual.env),
        commands: { ...manual.env.commands, unfreeze: "admin" },
      };
    });
    try {
      mockPermission(app.mock, "alice", "write");
      captureChecks(app.mock, checks, 0, 1);
      await app.probot.receive(
        checkRunEvent("requested_action", {
          identifier: "unfreeze",
          name: "syncward / manual",
          headSha: sha,
          sender: { login: "alice" },
        }),
      );
      await app.settle();
      app.mock.assertDone();
      const run = checks.filter((c) => c.name === "syncward / manual").at(-1);
      assert.match(run?.output?.title ?? "", /^unfreeze refused for @alice/);
      assert.match(run?.output?.summary ?? "", /needs \*\*admin\*\* permission \(has \*\*write\*\*\)/);
      assert.ok((await rt.reconciler.store.load(manual.instance)).freeze, "still frozen");
    } finally {
      await manual.setFreeze(undefined);
      await rt.reconciler.store.update(manual.instance, (s) => {
        s.deployedRules = undefined;
      });
    }
  });

  it("a pull request with a broken manifest gets a failing preview annotated at file and line", async () => {
    const head = repo.commit(
      { "auto/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings\ndata: {v: 2}\n" },
      "broken",
    );
    repo.git("reset", "-q", "--hard", "HEAD~1");
    const merge = testMerge(repo, repo.head(), head);
    mockPullFiles(app.mock, 13, ["auto/cm.yaml"]);
    mockPull(app.mock, 13, { head, mergeCommit: merge });
    mockTarball(app.mock, repo, merge);
    captureChecks(app.mock, checks, 2);
    await app.probot.receive(
      pullRequestEvent("opened", { number: 13, headSha: head, sender: { login: "alice" } }),
    );
    await app.settle();
    app.mock.assertDone();
    const check = checks.find((c) => c.head_sha === head && c.name === "syncward preview / auto");
    assert.equal(check?.conclusion, "failure");
    const annotation = check?.output?.annotations?.[0];
    assert.equal(annotation?.path, "auto/cm.yaml");
    assert.ok((annotation?.start_line ?? 0) >= 3, `annotated at line ${annotation?.start_line}`);
  });

  it("an invalid config on the default branch is reported on the pushed commit, and nothing syncs", async () => {
    const sha = repo.commit(
      {
        ".github/syncward.yml":
          "environments:\n  - name: auto\n    destination: {namespace: x}\n    sourec: {path: auto}\n",
      },
      "bad config",
    );
    mockConfig(
      app.mock,
      "environments:\n  - name: auto\n    destination: {namespace: x}\n    sourec: {path: auto}\n",
    );
    captureChecks(app.mock, checks, 1);
    await app.probot.receive(
      pushEvent({
        after: sha,
        before: repo.git("rev-parse", "HEAD~1"),
        modified: [".github/syncward.yml"],
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
    const check = checks.at(-1);
    assert.equal(check?.name, "syncward / config");
    assert.equal(check?.conclusion, "failure");
    assert.match(
      check?.output?.summary ?? "",
      /environments\[0\]\.sourec: unknown field \(did you mean "source"\?\)/,
    );
    assert.equal(check?.output?.annotations?.[0]?.path, ".github/syncward.yml");
  });
});
