// Pull-request previews end to end, on the real cluster: a preview shows what merging does (the
// PR's own change, not other people's merged changes "reverted"), never tells whether a guessed
// Secret value is right, and a Re-run redoes the preview without deploying anything.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mockPull, startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo, testMerge } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import {
  checkRunEvent,
  checkSuiteRerequestedEvent,
  pullRequestEvent,
  pushEvent,
} from "../support/webhooks.ts";

const cluster = useCluster();

const configMap = (name: string, v: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "${v}"}\n`;
const secret = (password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: "${password}"}\n`;

interface CheckRun {
  name: string;
  head_sha: string;
  conclusion?: string;
  actions?: unknown[];
  output?: { title: string; summary: string; text?: string };
}

describe("pull-request previews", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  let main: string;

  const checksFor = (sha: string) =>
    app.mock.requests
      .filter((r) => r.method === "POST" && /\/check-runs$/.test(r.url))
      .map((r) => r.body as CheckRun)
      .filter((c) => c.head_sha === sha);
  const deploymentsMade = () =>
    app.mock.requests.filter((r) => r.method === "POST" && /\/deployments$/.test(r.url)).length;
  const liveValue = async (name: string) =>
    ((await cluster.client.get("v1", "ConfigMap", ns, name)) as { data?: { v?: string } } | undefined)?.data
      ?.v;

  async function push(after: string, before: string, modified: string[]): Promise<void> {
    await app.probot.receive(pushEvent({ after, before, modified }));
    await app.settle();
  }

  /** A branch off `base` with `files`, left out of main; returns its head. */
  function branch(base: string, files: Record<string, string>, message: string): string {
    repo.git("checkout", "-q", "--detach", base);
    const head = repo.commit(files, message);
    repo.git("checkout", "-q", "main");
    return head;
  }

  before(async () => {
    ns = await cluster.namespace("previews");
    const stateNs = await cluster.stateNamespace("previews-state");
    const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
`;
    repo = makeRepo({
      "app/settings.yaml": configMap("settings", "1"),
      "app/other.yaml": configMap("other", "a"),
      "app/secret.yaml": secret("hunter2"),
    });
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    answerEverything(app.mock, config, repo.dir);
    const first = repo.head();
    await push(first, "0".repeat(40), ["app/settings.yaml"]);
    assert.equal(await liveValue("other"), "a", "the first commit is deployed");
    // Someone else's change lands on main after the pull requests below branched off.
    main = repo.commit({ "app/other.yaml": configMap("other", "b") }, "other: b");
    await push(main, first, ["app/other.yaml"]);
    assert.equal(await liveValue("other"), "b", "main is deployed");
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  it("a pull request behind main is previewed as merged: only its own change shows", async () => {
    const first = repo.git("rev-parse", "HEAD~1").trim();
    const head = branch(first, { "app/settings.yaml": configMap("settings", "2") }, "settings: 2");
    mockPull(app.mock, 7, { head, mergeCommit: testMerge(repo, main, head) });
    await app.probot.receive(pullRequestEvent("opened", { number: 7, headSha: head }));
    await app.settle();
    const [preview, ...more] = checksFor(head);
    assert.equal(more.length, 0);
    assert.equal(preview?.name, "syncward preview / dev");
    assert.equal(preview?.actions, undefined, "no Sync button on a preview");
    assert.match(preview?.output?.title ?? "", /^Preview: 0 to create, 1 to change, 0 to prune/);
    const shown = `${preview?.output?.summary}\n${preview?.output?.text ?? ""}`;
    assert.match(shown, /configmap\/settings|ConfigMap.*settings/i);
    const diff = /```diff\n([\s\S]*?)```/.exec(preview?.output?.summary ?? "")?.[1] ?? "";
    assert.match(diff, /- {2}v: "1"\n\+ {2}v: "2"/);
    assert.doesNotMatch(diff, /other/, "main's own change is not shown as being reverted");
    // main's own change is neither a change nor listed: it is one of the unchanged objects, counted.
    assert.doesNotMatch(shown, /\| other \|/);
    assert.match(shown, /_1 unchanged object not listed; /);
    assert.equal(await liveValue("settings"), "1", "a preview changes nothing");
  });

  it("a right and a wrong guess of a Secret's value get the same preview", async () => {
    const right = branch(main, { "app/secret.yaml": secret("hunter2") }, "same password");
    const wrong = branch(main, { "app/secret.yaml": secret("letmein") }, "other password");
    mockPull(app.mock, 8, { head: right, mergeCommit: right });
    mockPull(app.mock, 9, { head: wrong, mergeCommit: wrong });
    await app.probot.receive(pullRequestEvent("opened", { number: 8, headSha: right }));
    await app.probot.receive(pullRequestEvent("opened", { number: 9, headSha: wrong }));
    await app.settle();
    const [a] = checksFor(right);
    const [b] = checksFor(wrong);
    assert.ok(a && b, "both previewed");
    assert.equal(a.output?.title, b.output?.title);
    assert.match(a.output?.title ?? "", /1 Secret\(s\) not compared/);
    // Only the commits, the pull requests (number and branch) and the clock may differ.
    const strip = (c: CheckRun) =>
      `${c.output?.summary}\n${c.output?.text ?? ""}`
        .replace(/pull\/[89]\b/g, "pull/N")
        .replace(/#[89]\b/g, "#N")
        .replace(/feature-[89]\b/g, "feature-N")
        .replaceAll(right, "SHA")
        .replaceAll(wrong, "SHA")
        .replaceAll(right.slice(0, 7), "SHA")
        .replaceAll(wrong.slice(0, 7), "SHA")
        .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/g, "DATE")
        .replace(/\(\d+ms\)/g, "(ms)");
    assert.equal(strip(a), strip(b), "nothing in the check run tells the two apart");
    assert.doesNotMatch(strip(b), /hunter2|letmein/);
  });

  it("Re-run on a preview redoes the preview and deploys nothing", async () => {
    const head = branch(main, { "app/settings.yaml": configMap("settings", "3") }, "settings: 3");
    mockPull(app.mock, 10, { head, mergeCommit: head }, 2);
    await app.probot.receive(pullRequestEvent("opened", { number: 10, headSha: head }));
    await app.settle();
    const deployments = deploymentsMade();
    await app.probot.receive(
      checkRunEvent("rerequested", { name: "syncward preview / dev", headSha: head, pullRequests: [10] }),
    );
    await app.settle();
    const previews = checksFor(head);
    assert.deepEqual(
      previews.map((c) => c.name),
      ["syncward preview / dev", "syncward preview / dev"],
      "previewed again",
    );
    assert.equal(deploymentsMade(), deployments, "no deployment");
    assert.equal(await liveValue("settings"), "1", "nothing applied");
  });

  it("'Re-run all checks' of a pull request's commit redoes its preview and deploys nothing", async () => {
    const head = branch(main, { "app/settings.yaml": configMap("settings", "5") }, "settings: 5");
    mockPull(app.mock, 12, { head, mergeCommit: head });
    const deployments = deploymentsMade();
    await app.probot.receive(checkSuiteRerequestedEvent({ headSha: head, pullRequests: [12] }));
    await app.settle();
    assert.deepEqual(
      checksFor(head).map((c) => c.name),
      ["syncward preview / dev"],
    );
    assert.equal(deploymentsMade(), deployments, "no deployment");
    assert.equal(await liveValue("settings"), "1", "nothing applied");
  });

  it("a pull request from a fork is not previewed; its Re-run does nothing either", async () => {
    const head = branch(main, { "app/settings.yaml": configMap("settings", "4") }, "from a fork");
    const seen = app.mock.requests.length;
    await app.probot.receive(pullRequestEvent("opened", { number: 11, headSha: head, fork: true }));
    // GitHub lists no pull request on a fork's check run.
    await app.probot.receive(checkRunEvent("rerequested", { name: "syncward preview / dev", headSha: head }));
    await app.settle();
    const asked = app.mock.requests.slice(seen).map((r) => `${r.method} ${new URL(r.url).pathname}`);
    assert.deepEqual(asked, ["GET /repos/acme/shop/pulls/11/files"], "only the config check's list of files");
    assert.equal(await liveValue("settings"), "1");
  });
});
