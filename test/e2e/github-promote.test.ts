// `/promote prod` as a maintainer lives it, through GitHub comments on the real plane: staging runs
// a commit Healthy (healthyFor 0s: proven at once); `/promote prod` on the gated prod asks for an
// approval, saying what it would promote and on what evidence, and deploys nothing; `/approve
// prod` by the listed approver deploys it, and prod's history keeps the promotion (asked by alice,
// approved by carol) with its evidence.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkName } from "../../src/github/reporter.ts";
import { startApp, type TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { commentOnPull, mockMergedPull } from "../support/pull-comments.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("/promote prod through GitHub comments", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let app: TestApp;
  let c1: string;
  const ns = { staging: "", prod: "" };

  const live = async (env: keyof typeof ns) =>
    (
      (await cluster.client.get("v1", "ConfigMap", ns[env], "settings")) as
        | { data?: { v?: string } }
        | undefined
    )?.data?.v;
  const state = (env: string) => {
    const r = app.parts.runtimes.all()[0]!.reconciler;
    return r.store.load(r.controller(env).instance);
  };
  /** A comment on #7 (bob's pull request, merged as c1); the reply syncward wrote to it. */
  const comment = async (id: number, login: string, body: string) => {
    const before = github.comments.length;
    await commentOnPull(app, id, login, body);
    const reply = github.comments.slice(before).find((c) => c.issue === 7 && !c.body.includes("<!--"));
    assert.ok(reply, `a reply to ${body}`);
    return reply.body;
  };

  before(async () => {
    ns.staging = await cluster.namespace("ghpromo-stg");
    ns.prod = await cluster.namespace("ghpromo-prod");
    const stateNs = await cluster.stateNamespace("ghpromo-state");
    repo = makeRepo({ "overlays/staging/cm.yaml": cm("1"), "overlays/prod/cm.yaml": cm("1") });
    c1 = repo.head();
    github = new FakeGitHub(
      repo,
      `environments:
  - name: staging
    source: {path: overlays/staging}
    destination: {namespace: ${ns.staging}}
    syncPolicy: {automated: {prune: true}}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: ${ns.prod}}
    approval: {users: [carol]}
    promotion: {after: staging, healthyFor: 0s}
`,
    );
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs, autoStart: false });
    github.install(app.mock);
    // The pull request whose merge produced c1, which the commands are commented on.
    mockMergedPull(app, () => [c1]);
  });

  after(async () => {
    for (const rt of app.parts.runtimes.all()) {
      await rt.stop();
      rt.reporter.close();
    }
    app.mock.reset();
  });

  it("waits for the approval, then deploys what staging proved, the reply saying so at each step", async () => {
    await app.probot.receive(
      pushEvent({ after: c1, before: "0".repeat(40), modified: ["overlays/staging/cm.yaml"] }),
    );
    await app.settle();
    assert.equal(await live("staging"), "1");
    await eventually(
      "staging Healthy at c1",
      async () => (await state("staging")).healthRecords?.at(-1)?.revision === c1,
    );
    assert.equal(await live("prod"), undefined, "prod takes nothing on its own");

    const asked = await comment(3001, "alice", "/promote prod");
    assert.match(
      asked,
      new RegExp(
        `^\\*\\*prod\\*\\*: promoting \`${c1.slice(0, 7)}\` \\(\`staging: Healthy for \\d+s at this commit\`\\) waits for \`/approve prod\` from an approver\\.`,
      ),
    );
    assert.match(
      asked,
      /\*\*Next:\*\* an approver comments `\/approve prod` \(or clicks \*\*Approve\*\* on the check run `syncward \/ prod`\)\./,
    );
    assert.equal(await live("prod"), undefined, "nothing deployed before the approval");
    assert.equal((await state("prod")).pendingSync?.revision, c1);
    const waiting = github.checks.filter((c) => c.name === checkName("prod") && c.head_sha === c1).at(-1);
    assert.match(
      `${waiting?.output?.title}\n${waiting?.output?.summary}`,
      /promotion: staging: Healthy for \d+s at this commit/,
      "the approver sees the evidence",
    );

    const approved = await comment(3002, "carol", "/approve prod");
    assert.match(
      approved,
      new RegExp(`^Approved \`${c1.slice(0, 7)}\` for \\*\\*prod\\*\\* \\(1/1\\); deploying\\.`),
    );
    await eventually("prod at c1", async () => (await live("prod")) === "1");
    await app.settle();
    const entry = (await state("prod")).history.at(-1);
    assert.equal(entry?.revision, c1);
    assert.equal(entry?.result, "Succeeded");
    assert.equal(entry?.actor, "alice", "the promotion alice asked for");
    assert.equal(entry?.promotion?.reason, "approved by @carol");
    assert.deepEqual(entry?.promotion?.from, ["staging"]);
    const done = github.checks.filter((c) => c.name === checkName("prod") && c.head_sha === c1).at(-1);
    assert.equal(done?.conclusion, "success");
    app.mock.assertDone();
  });
});
