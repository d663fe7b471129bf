// Config as code, checked: a pull request that changes `.github/syncward.yml` gets a
// `syncward / config` check run of its version (errors at file and line, what it changes per
// environment, which guards it loosens) and nothing deploys from it; `.github/syncward.yaml` is
// read too; an invalid config on the default branch answers only comments that hold a command.
// The cluster is unreachable: none of this may touch it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockConfig, mockPermission, mockReactions, mockReply, REPO_PATH } from "../support/app.ts";
import { useOfflineApp } from "../support/comment-app.ts";
import type { GitHubMock } from "../support/github.ts";
import { issueCommentEvent, pullRequestEvent } from "../support/webhooks.ts";

const app = useOfflineApp();
const HEAD = "e".repeat(40);

// Previews are off for both, so a pull request reads nothing from the cluster.
const MAIN = `environments:
  - name: dev
    source: {path: overlays/dev}
    destination: {namespace: shop-dev}
    previews: false
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [carol], minimum: 1}
`;

interface CheckRun {
  name: string;
  head_sha: string;
  conclusion: string;
  actions?: unknown;
  output: {
    title: string;
    summary: string;
    annotations?: Array<{ path: string; start_line: number; message: string }>;
  };
}

function fileContent(path: string, text: string) {
  return {
    type: "file",
    encoding: "base64",
    name: path.split("/").at(-1),
    path,
    content: Buffer.from(text).toString("base64"),
    sha: "0".repeat(40),
    size: text.length,
  };
}

/** The PR's files, its version of the config, and the check run it gets (captured). */
function mockPullRequestWithConfig(
  mock: GitHubMock,
  files: string[],
  proposed?: string,
): { check: () => CheckRun } {
  mock.api
    .get(`${REPO_PATH}/pulls/7/files`)
    .query(true)
    .reply(
      200,
      files.map((filename) => ({ filename, status: "modified" })),
    );
  let check: CheckRun | undefined;
  if (proposed !== undefined) {
    mock.api
      .get(/\/contents\/\.github(%2F|\/)syncward\.yml/)
      .query({ ref: HEAD })
      .reply(200, fileContent(".github/syncward.yml", proposed));
    mock.api
      .post(`${REPO_PATH}/check-runs`, (body: CheckRun) => {
        check = body;
        return true;
      })
      .reply(201, { id: 77 });
  }
  return {
    check: () => {
      if (!check) throw new Error("no check run was sent");
      return check;
    },
  };
}

const opened = () => pullRequestEvent("opened", { number: 7, headSha: HEAD, sender: { login: "alice" } });

describe("syncward / config on pull requests", () => {
  it("a promotion cycle and an unknown upstream fail the check at their lines, naming promotion.after", async () => {
    const proposed = `${MAIN.replace(
      "    previews: false\n",
      "    previews: false\n    promotion: {after: prod, healthyFor: 1m}\n",
    )}    promotion: {after: [dev, stagign], healthyFor: 1m}\n`;
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "failure");
    const messages = (check.output.annotations ?? []).map((a) => `${a.start_line}: ${a.message}`);
    assert.ok(
      messages.some((m) =>
        /^6: environments\[0\]\.promotion\.after: promotion cycle: dev -> prod -> dev \(each waits for the next, so none could ever deploy\)$/.test(
          m,
        ),
      ),
      messages.join("\n"),
    );
    assert.ok(
      messages.some((m) =>
        /^13: environments\[1\]\.promotion\.after\[1\]: prod is promoted after "stagign", which is not an environment of this file.*; environments: dev, prod$/.test(
          m,
        ),
      ),
      messages.join("\n"),
    );
    assert.match(check.output.summary, /promotion cycle: dev -> prod -> dev/);
  });

  it("a typo in the proposed config fails the check at its line, naming the field", async () => {
    const proposed = MAIN.replace("    source: {path: overlays/prod}", "    sourec: {path: overlays/prod}");
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.name, "syncward / config");
    assert.equal(check.head_sha, HEAD);
    assert.equal(check.conclusion, "failure");
    assert.equal(check.actions, undefined, "a config check has no buttons: it never deploys");
    const annotation = check.output.annotations?.find((a) => /sourec/.test(a.message));
    assert.equal(annotation?.path, ".github/syncward.yml");
    assert.equal(annotation?.start_line, 7);
    assert.match(
      annotation?.message ?? "",
      /environments\[1\]\.sourec: unknown field \(did you mean "source"\?\)/,
    );
  });

  for (const [what, from, why] of [
    ["production", "edge", /"edge" is production: a preview never deploys to a production destination/],
    [
      "gated by approval",
      "staging",
      /"staging" is gated by approval: a preview never takes a gated environment's place/,
    ],
  ] as const)
    it(`a preview template that copies an environment ${what} fails the check at its line`, async () => {
      const proposed = `${MAIN}  - name: staging
    source: {path: overlays/staging}
    destination: {namespace: shop-staging}
    previews: false
    approval: {users: [carol], minimum: 1}
  - name: edge
    source: {path: overlays/edge}
    destination: {namespace: shop-edge}
    previews: false
    production: true
previewEnvironments:
  - from: ${from}
    namespace: "shop-pr-{number}"
`;
      const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
      mockConfig(app().mock, MAIN);
      await app().probot.receive(opened());
      app().mock.assertDone();
      const check = sent.check();
      assert.equal(check.name, "syncward / config");
      assert.equal(check.conclusion, "failure");
      const annotation = check.output.annotations?.find((a) =>
        /previewEnvironments\[0\]\.from/.test(a.message),
      );
      assert.ok(annotation, JSON.stringify(check.output.annotations));
      assert.equal(annotation.path, ".github/syncward.yml");
      assert.equal(annotation.start_line, proposed.split("\n").indexOf(`  - from: ${from}`) + 1);
      assert.match(annotation.message, why);
    });

  it("a proposed config that removes prod's approval is valid but needs a person's decision, never green or grey", async () => {
    const proposed = MAIN.replace("    approval: {users: [carol], minimum: 1}\n", "");
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml", "README.md"], proposed);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "action_required");
    assert.equal(check.output.title, "Loosens the production guards of prod");
    assert.match(check.output.summary, /#### `prod` \(changed\)/);
    assert.match(check.output.summary, /approval removed: syncs no longer wait for \/approve/);
    assert.match(check.output.summary, /- `environments\[prod\]\.approval\.users: \["carol"\] → \(unset\)`/);
    assert.match(
      check.output.summary,
      /### Who approves\n\n- `prod`: now `@carol`; 1 approval needed; after the merge no approval: its syncs wait for nobody/,
    );
    assert.doesNotMatch(check.output.summary, /#### `dev`/, "dev does not change");
    assert.match(check.output.summary, /\n\n\*\*Next:\*\* whoever owns prod's guards decides/);
  });

  it("Validate=false on prod is shown by its path, under Loosenings, and is not green", async () => {
    const proposed = MAIN.replace(
      "syncPolicy: {automated: {prune: true}}",
      "syncPolicy: {automated: {prune: true}, syncOptions: [Validate=false]}",
    );
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "action_required");
    const summary = check.output.summary;
    assert.match(summary, /- `environments\[prod\]\.syncPolicy\.syncOptions\.Validate: true → false`/);
    const lines = summary.split("\n").filter((l) => l.startsWith("- `environments["));
    assert.equal(lines.length, 1, `only the value that moved: ${lines.join("\n")}`);
    assert.ok(
      summary.indexOf("### :warning: Loosenings") < summary.indexOf("#### `prod`"),
      "guards come before the values",
    );
    assert.match(
      summary,
      /- `prod`: `Validate=false: fields the API server does not know are no longer refused`/,
    );
  });

  it("removing production, lowering approvals 2→1 and allowing self-approval on prod names prod's approvers", async () => {
    const base = MAIN.replace(
      "approval: {users: [carol], minimum: 1}",
      "approval: {users: [carol, dave], minimum: 2}",
    );
    const proposed = base
      .replace("    production: true\n", "")
      .replace(
        "approval: {users: [carol, dave], minimum: 2}",
        "approval: {users: [carol, dave], minimum: 1, allowAuthor: true}",
      );
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, base);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "action_required");
    assert.equal(check.output.title, "Loosens the production guards of prod");
    const summary = check.output.summary;
    for (const line of [
      "environments[prod].production: true → false",
      "environments[prod].approval.minimum: 2 → 1",
      "environments[prod].approval.allowAuthor: false → true",
    ])
      assert.ok(summary.includes(`- \`${line}\``), line);
    assert.match(summary, /no longer marked production/);
    assert.match(summary, /approval\.minimum lowered from 2 to 1/);
    assert.match(
      summary,
      /- `prod`: now `@carol`, `@dave`; 2 approvals needed; after the merge `@carol`, `@dave`; 1 approval needed; authors may approve their own change/,
    );
    assert.doesNotMatch(summary, /(^|[^`])@carol/, "the check pings nobody");
  });

  it("a loosening of an environment that is neither production nor gated stays neutral", async () => {
    const proposed = MAIN.replace(
      "    previews: false\n",
      "    previews: false\n    syncPolicy: {syncOptions: [Validate=false]}\n",
    );
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "neutral");
    assert.equal(check.output.title, "Valid; loosens the guards of dev");
    assert.doesNotMatch(check.output.summary, /### Who approves/);
  });

  const windows = "    syncWindows: [{kind: deny, schedule: '0 22 * * *', duration: 8h}]\n";
  const loosening: Array<[string, string, string, RegExp]> = [
    [
      "only trusts a bot",
      MAIN,
      MAIN.replace(
        "approval: {users: [carol], minimum: 1}",
        "approval: {users: [carol], minimum: 1, trustedBots: ['acme-release[bot]']}",
      ),
      /trusted bots added: acme-release\[bot\]/,
    ],
    ["only drops a deny window", MAIN + windows, MAIN, /deny sync windows removed or changed: 0 22 \* \* \*/],
  ];
  for (const [name, base, proposed, flagged] of loosening)
    it(`a proposed config that ${name} is flagged as loosening prod (third review, A)`, async () => {
      const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
      mockConfig(app().mock, base);
      await app().probot.receive(opened());
      app().mock.assertDone();
      const check = sent.check();
      assert.equal(check.output.title, "Loosens the production guards of prod");
      assert.equal(check.conclusion, "action_required");
      assert.match(check.output.summary, flagged);
    });

  const prodLine = "    approval: {users: [carol], minimum: 1}\n";
  const weakening: Array<[string, string, string, RegExp]> = [
    ["trusts every field manager", "", "    trustedManagers: ['*']\n", /trustedManagers widened: \*/],
    [
      "ignores the pod spec",
      "",
      "    ignoreDifferences: [{group: apps, kind: Deployment, jsonPointers: [/spec/template/spec]}]\n",
      /ignoreDifferences widened: apps\/Deployment ignores \/spec\/template\/spec/,
    ],
    [
      "ignores a manager's fields",
      "",
      "    ignoreDifferences: [{group: '*', kind: '*', managedFieldsManagers: [kubectl-edit]}]\n",
      /managedFieldsManagers widened/,
    ],
    ["turns prune off", "", "", /prune turned off/],
    ["opens /approve to readers", "", "    commands: {approve: read}\n", /\/approve now needs read/],
  ];
  for (const [name, _base, added, flagged] of weakening)
    it(`a proposed config that ${name} is listed under Loosenings`, async () => {
      const proposed =
        name === "turns prune off"
          ? MAIN.replace("{automated: {prune: true}}", "{automated: {prune: false}}")
          : MAIN.replace(prodLine, prodLine + added);
      const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
      mockConfig(app().mock, MAIN);
      await app().probot.receive(opened());
      app().mock.assertDone();
      const check = sent.check();
      assert.equal(check.output.title, "Loosens the production guards of prod");
      const heading = check.output.summary.indexOf("### :warning: Loosenings");
      assert.ok(heading >= 0, check.output.summary);
      const section = check.output.summary.slice(heading, check.output.summary.indexOf("#### ", heading));
      assert.match(section, flagged);
      assert.match(section, /applies it only after an approval under the rule it was deployed with/);
    });

  it("an approver team syncward cannot read is named on the check", async () => {
    const proposed = MAIN.replace(
      "approval: {users: [carol], minimum: 1}",
      "approval: {users: [carol], teams: [acme/sre], minimum: 1}",
    );
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    app()
      .mock.api.get("/orgs/acme/teams/sre")
      .reply(403, { message: "Resource not accessible by integration" });
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "action_required");
    assert.equal(
      check.output.title,
      "Loosens the production guards of prod",
      "an added approver loosens the gate",
    );
    assert.match(check.output.summary, /approvers added: acme\/sre/);
    assert.match(
      check.output.summary,
      /cannot read team acme\/sre: 403; an owner of acme must accept syncward's "Members: read" permission/,
    );
  });

  it("a newly listed approver login no GitHub account has, or whose account is no collaborator, fails the check", async () => {
    const proposed = MAIN.replace(
      "approval: {users: [carol], minimum: 1}",
      "approval: {users: [carol, dave, erin, ghost-approver], minimum: 1}",
    );
    const sent = mockPullRequestWithConfig(app().mock, [".github/syncward.yml"], proposed);
    mockConfig(app().mock, MAIN);
    // Only the logins the change adds are looked up (carol was listed before).
    app().mock.api.get("/users/dave").reply(200, { login: "dave", id: 4001, type: "User" });
    app().mock.api.get("/repos/acme/shop/collaborators/dave").reply(204);
    // erin exists, but the repository is public: she can read it without being a collaborator.
    app().mock.api.get("/users/erin").reply(200, { login: "erin", id: 4002, type: "User" });
    app().mock.api.get("/repos/acme/shop/collaborators/erin").reply(404, { message: "Not Found" });
    app().mock.api.get("/users/ghost-approver").reply(404, { message: "Not Found" });
    await app().probot.receive(opened());
    app().mock.assertDone();
    const check = sent.check();
    assert.equal(check.conclusion, "failure");
    assert.equal(check.output.title, "2 listed approver(s) are no GitHub account or no collaborator");
    assert.match(
      check.output.summary,
      /@ghost-approver is listed as an approver but GitHub knows no account by that login \(renamed or deleted\?\); update approval\.users/,
    );
    assert.match(
      check.output.summary,
      /@erin is listed as an approver but is not a collaborator of acme\/shop/,
    );
    assert.match(check.output.summary, /an approval by any of them would be refused/);
    assert.doesNotMatch(check.output.summary, /@dave is listed/);
  });

  it("a pull request that does not touch the config gets no config check", async () => {
    mockPullRequestWithConfig(app().mock, ["overlays/dev/deployment.yaml"]);
    mockConfig(app().mock, MAIN);
    await app().probot.receive(opened());
    app().mock.assertDone();
    assert.equal(
      app().mock.requests.filter((r) => r.method === "POST").length,
      0,
      "nothing was sent: no check run, no preview",
    );
  });
});

describe("where the config is read from", () => {
  it(".github/syncward.yaml is read when there is no .github/syncward.yml", async () => {
    const mock = app().mock;
    mock.api
      .get(/\/contents\/\.github(%2F|\/)syncward\.yml/)
      .query(true)
      .reply(404, { message: "Not Found" });
    mock.api
      .get(/\/contents\/\.github(%2F|\/)syncward\.yaml/)
      .query(true)
      .reply(200, fileContent(".github/syncward.yaml", MAIN));
    mockPermission(mock, "alice", "read");
    mockReactions(mock, 1001, "rocket");
    const reply = mockReply(mock, 7);
    await app().probot.receive(
      issueCommentEvent({ body: "/help", sender: { login: "alice", type: "User" }, commentId: 1001 }),
    );
    mock.assertDone();
    assert.match(reply.body(), /`dev`, `prod`|dev.*prod/s);
  });
});

describe("an invalid config on the default branch", () => {
  const BROKEN = MAIN.replace("previews: false", "previewz: false");

  it("a comment without a command gets no answer", async () => {
    mockConfig(app().mock, BROKEN);
    await app().probot.receive(
      issueCommentEvent({ body: "LGTM, thanks!", sender: { login: "alice", type: "User" }, commentId: 1001 }),
    );
    app().mock.assertDone();
    assert.equal(app().mock.requests.filter((r) => r.method === "POST").length, 0);
  });

  it("a comment with a command is answered once, naming the file and the field", async () => {
    mockConfig(app().mock, BROKEN);
    const reply = mockReply(app().mock, 7);
    await app().probot.receive(
      issueCommentEvent({ body: "/sync dev", sender: { login: "alice", type: "User" }, commentId: 1001 }),
    );
    app().mock.assertDone();
    assert.match(reply.body(), /syncward cannot act: `\.github\/syncward\.yml` on `\w+` is invalid/);
    assert.match(reply.body(), /environments\[0\]\.previewz: unknown field \(did you mean "previews"\?\)/);
  });
});
