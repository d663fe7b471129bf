// policy.requireSignedCommits on the real cluster, with GitHub's commit verification
// (`GET /repos/{owner}/{repo}/commits/{ref}`, answered in the shape of GitHub's own example):
// a verified commit deploys; an unsigned or unverified one is refused with GitHub's reason in
// the check run, before anyone is asked to approve it, and no deployment is made.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import { REPO_PATH, startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { GITHUB_API } from "../support/github.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

interface Verification {
  verified: boolean;
  reason: string;
  signature: string | null;
  payload: string | null;
  verified_at: string | null;
}

/** GitHub's example answer of "Get a commit", for `sha`, with `verification` in place of its own. */
function commitAnswer(sha: string, verification: Verification): Record<string, unknown> {
  const spec = createRequire(import.meta.url)("@octokit/openapi/generated/api.github.com.json") as {
    paths: Record<
      string,
      { get: { responses: { 200: { content: { "application/json": { examples: object } } } } } }
    >;
    components: { examples: Record<string, { value: unknown }> };
  };
  const examples = spec.paths["/repos/{owner}/{repo}/commits/{ref}"]!.get.responses[200].content[
    "application/json"
  ].examples as Record<string, { $ref: string }>;
  const ref = Object.values(examples)[0]!.$ref.split("/").at(-1)!;
  const example = structuredClone(spec.components.examples[ref]!.value) as {
    sha: string;
    commit: { verification: Verification };
  };
  return { ...example, sha, commit: { ...example.commit, verification } };
}

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("signed commits required", () => {
  let app: TestApp;
  let repo: TestRepo;
  let github: FakeGitHub;
  const ns = { web: "", prod: "" };

  const live = async (env: keyof typeof ns) =>
    (
      (await cluster.client.get("v1", "ConfigMap", ns[env], "settings")) as
        | { data?: { v?: string } }
        | undefined
    )?.data?.v;
  /** GitHub answers the commit's verification once; the scope tells whether it was asked. */
  const verify = (sha: string, verification: Verification) =>
    app.mock.scope(GITHUB_API).get(`${REPO_PATH}/commits/${sha}`).reply(200, commitAnswer(sha, verification));
  const push = async (sha: string) => {
    await app.probot.receive(
      pushEvent({ after: sha, modified: ["web/cm.yaml", "prod/cm.yaml"], sender: { login: "mallory" } }),
    );
    await app.settle();
  };

  before(async () => {
    ns.web = await cluster.namespace("ghs-web");
    ns.prod = await cluster.namespace("ghs-prod");
    const stateNs = await cluster.stateNamespace("ghs-state");
    repo = makeRepo({ "web/cm.yaml": cm("1"), "prod/cm.yaml": cm("1") });
    github = new FakeGitHub(
      repo,
      `environments:
  - name: web
    source: {path: web}
    destination: {namespace: ${ns.web}}
    syncPolicy: {automated: {prune: true}}
    policy: {requireSignedCommits: true}
  - name: prod
    source: {path: prod}
    destination: {namespace: ${ns.prod}}
    syncPolicy: {automated: {prune: true}}
    approval: {users: [carol], minimum: 1}
    policy: {requireSignedCommits: true}
`,
    );
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    github.install(app.mock);
  });

  after(async () => {
    for (const rt of app.parts.runtimes.all()) {
      await rt.stop();
      rt.reporter.close();
    }
    // Every request had a mock and was one GitHub accepts (OpenAPI), across the whole file.
    app.mock.assertDone();
  });

  it("deploys a commit GitHub shows as verified", async () => {
    const sha = repo.head();
    // Asked once: the answer is kept for the approval gate and the sync of both environments.
    const asked = verify(sha, {
      verified: true,
      reason: "valid",
      signature: "-----BEGIN PGP SIGNATURE-----\n...\n-----END PGP SIGNATURE-----",
      payload: "tree ...",
      verified_at: "2026-11-29T20:00:00Z",
    });
    await push(sha);
    assert.ok(asked.isDone());
    assert.equal(await live("web"), "1");
    assert.deepEqual(github.statesOf("web").at(-1), "success");
    assert.equal(
      github.checks.find((c) => c.name === "syncward / web" && c.head_sha === sha)?.conclusion,
      "success",
    );
    assert.equal(await live("prod"), undefined, "prod still waits for its approval");
    assert.deepEqual(github.statesOf("prod"), ["queued"], "prod's deployment waits for approval");
  });

  it("refuses an unsigned commit with GitHub's reason in the check run, before asking for approval, and makes no deployment", async () => {
    const sha = repo.commit({ "web/cm.yaml": cm("2"), "prod/cm.yaml": cm("2") }, "unsigned change");
    const deploymentsBefore = github.deployments.length;
    const asked = verify(sha, {
      verified: false,
      reason: "unsigned",
      signature: null,
      payload: null,
      verified_at: null,
    });
    await push(sha);
    assert.ok(asked.isDone());
    assert.equal(await live("web"), "1", "nothing applied");
    assert.equal(await live("prod"), undefined);
    assert.equal(github.deployments.length, deploymentsBefore, "no deployment for a refused commit");
    for (const env of ["web", "prod"]) {
      const check = github.checks.findLast((c) => c.name === `syncward / ${env}` && c.head_sha === sha);
      assert.notEqual(check?.conclusion, "success", env);
      // The title (cut at 120 characters) leads with GitHub's reason; the summary has it all.
      assert.match(
        check?.output?.title ?? "",
        new RegExp(
          `^Refused: commit ${sha.slice(0, 7)} is not Verified on GitHub: the commit is not signed \\(unsigned\\); environment ${env}`,
        ),
        env,
      );
      assert.match(
        check?.output?.summary ?? "",
        /deploys only signed commits \(policy\.requireSignedCommits\)/,
      );
    }
  });

  it("refuses a signed but unverified commit, naming why GitHub does not trust the signature", async () => {
    const sha = repo.commit({ "web/cm.yaml": cm("3") }, "signed with an unknown key");
    const asked = verify(sha, {
      verified: false,
      reason: "unknown_key",
      signature: "-----BEGIN PGP SIGNATURE-----\n...\n-----END PGP SIGNATURE-----",
      payload: "tree ...",
      verified_at: null,
    });
    await push(sha);
    assert.ok(asked.isDone());
    assert.equal(await live("web"), "1");
    const check = github.checks.findLast((c) => c.name === "syncward / web" && c.head_sha === sha);
    assert.match(
      check?.output?.title ?? "",
      /it is signed with a key no GitHub user has added \(unknown_key\)/,
    );
  });
});
