// The Approve button of a waiting check run, on the real cluster: a commit pushed straight to the
// branch (no pull request to comment on) is shown to approvers with what it would deploy and the
// plan, its author's click is refused on the run itself, and a listed approver with only read
// permission releases it, which deploys it. Authorized by the same code as `/approve`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  mockConfig,
  mockNoEarlierDeployments,
  mockPermission,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { type CheckRun, captureReports, mockTarball } from "../support/github-checks.ts";
import { mockAccount, mockRange } from "../support/github-range.ts";
import { checkRunEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

const cm = (v: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {release: "${v}"}\n`;

describe("the Approve button", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  let head: string;
  const runs: CheckRun[] = [];
  const statuses: string[] = [];

  before(async () => {
    ns = await cluster.namespace("appr-btn");
    const stateNs = await cluster.stateNamespace("appr-btn-state");
    repo = makeRepo({ "prod/app.yaml": cm("1.0") });
    head = repo.head();
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(
      app.mock,
      `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: ${ns}}
    production: true
    syncPolicy: {automated: {prune: true}}
    approval: {users: [alice, carol], minimum: 1}
`,
    );
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  /** The reports: every check run as it stands after its updates, every deployment status. */
  const mockReports = (newDeployment = false) =>
    captureReports(app.mock, { runs, statuses }, 77, newDeployment ? "once" : "no");

  const click = (login: string) =>
    app.probot.receive(
      checkRunEvent("requested_action", {
        identifier: "approve",
        name: "syncward / prod",
        headSha: head,
        sender: { login },
      }),
    );
  /** What Alice's direct push would deploy: her commit alone (a first deployment), in no pull request. */
  const mockHeadCommit = () =>
    mockRange(app.mock, { head, commits: [{ sha: head, author: "alice", committer: "alice" }], pulls: [] });
  const prodRun = () => runs.find((r) => r.name === "syncward / prod" && r.head_sha === head);

  it("a direct push waits with the commit, the plan and an Approve button", async () => {
    mockReports(true);
    mockTarball(app.mock, repo, head);
    mockNoEarlierDeployments(app.mock, "prod");
    mockHeadCommit();
    await app.probot.receive(
      pushEvent({
        after: head,
        before: "0".repeat(40),
        modified: ["prod/app.yaml"],
        sender: { login: "alice" },
      }),
    );
    await app.settle();
    app.mock.assertDone();
    const run = prodRun();
    assert.equal(run?.conclusion, "action_required");
    assert.deepEqual(
      (run as { actions?: Array<{ identifier: string }> }).actions?.map((a) => a.identifier),
      ["sync", "freeze", "approve"],
    );
    const summary = run?.output?.summary ?? "";
    assert.match(summary, /\*\*1 more\*\* needed/);
    assert.match(summary, /Approvers: @carol\./, "alice pushed it: she is not offered as an approver");
    assert.match(summary, /Cannot approve it, having contributed to it: `alice`\./);
    assert.match(
      summary,
      new RegExp(`\\| \\[\`${head.slice(0, 7)}\`\\]\\([^)]*/commit/${head}\\) \\| \`alice\` \\| change \\|`),
    );
    assert.match(summary, /\n\+ {2}release: "1\.0"\n/, "the plan is shown");
    assert.deepEqual(statuses, ["queued"]);
  });

  it("the author's click is refused, on the check run, and nothing is deployed", async () => {
    mockReports();
    mockPermission(app.mock, "alice", "write");
    mockAccount(app.mock, "alice");
    mockHeadCommit(); // read by the approval
    mockHeadCommit(); // and again for the run that says it was refused
    await click("alice");
    await app.settle();
    app.mock.assertDone();
    const run = prodRun();
    assert.equal(run?.output?.title, "Approval by @alice refused");
    assert.match(
      run?.output?.summary ?? "",
      new RegExp(
        `Sorry @alice, you cannot approve \\*\\*prod\\*\\*: you authored ${head.slice(0, 7)}, committed ${head.slice(0, 7)}, pushed ${head.slice(0, 7)} in what would be deployed`,
      ),
    );
    assert.equal(run?.conclusion, "action_required", "still waiting for an approver");
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined);
  });

  it("a listed approver with read permission clicks Approve and the commit deploys", async () => {
    mockReports();
    mockPermission(app.mock, "carol", "read");
    mockAccount(app.mock, "carol");
    mockHeadCommit();
    await click("carol");
    await app.settle();
    app.mock.assertDone();
    const live = (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as {
      data: { release: string };
    };
    assert.equal(live?.data.release, "1.0");
    assert.deepEqual(statuses, ["queued", "in_progress", "success"]);
    const done = runs.filter((r) => r.head_sha === head).at(-1);
    assert.equal(done?.conclusion, "success");
  });
});
