// A rollback and its pin as a maintainer lives them, through GitHub comments on the real plane:
// `/rollback dev 2` re-deploys history entry 2's render and pins dev there (the reply, the check
// run, the deployment status and the gauge say so); three pushes then deploy nothing and a hand
// edit is still reverted to the pinned render; the app restarted (a new instance on the same
// state and GitHub) keeps the pin; `/unpin dev` deploys the branch head and the pin is gone from
// everything that showed it. A rollback of a frozen environment is refused, pinning nothing. And
// on a gated environment a fix pushed on top asks for approval, and its approval ends the pin.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { checkName } from "../../src/github/reporter.ts";
import { AppStatusFollower } from "../../src/observability/app-status-follower.ts";
import { healthHandler } from "../../src/observability/http.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import {
  bootstrapAsRestarted,
  mockPermission,
  mockReactions,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { commentOnPull, mockMergedPull } from "../support/pull-comments.ts";
import { issueCommentEvent, pushEvent, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
const APP = `gh_${repoIdOf("acme/shop")}`;
const CHECK = checkName("dev");

const cm = (name: string, v: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "${v}"}\n`;
/** Commit i of the branch: `settings` says i; entry 2 alone has `flag`, from 3 on `newer` exists. */
const files = (i: number) => ({
  "app/settings.yaml": cm("settings", String(i)),
  "app/flag.yaml": i === 2 ? cm("flag", "on") : null,
  "app/newer.yaml": i >= 3 ? cm("newer", String(i)) : null,
});

/** One app instance as a pod runs it: the app, and /metrics from the stored state. */
interface Instance {
  app: TestApp;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

async function instance(
  stateNamespace: string,
  github: FakeGitHub,
  o: { restarted?: boolean } = {},
): Promise<Instance> {
  const metrics = createMetrics({ defaultMetrics: false });
  const follower = new AppStatusFollower({
    client: cluster.syncwardClient,
    namespace: stateNamespace,
    metrics,
  });
  follower.start();
  const app = await startApp({
    client: cluster.syncwardClient,
    stateNamespace,
    appStatus: follower,
    autoStart: o.restarted ?? false,
  });
  github.install(app.mock);
  const server: Server = createServer((req, res) => {
    if (!healthHandler({ metrics, ready: () => true })(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    app,
    scrape: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
    async close() {
      if (closed) return;
      closed = true;
      for (const rt of app.parts.runtimes.all()) {
        await rt.stop();
        rt.reporter.close();
      }
      await follower.stop();
      server.close();
      app.mock.reset();
    },
  };
}

const pinnedGauge = (text: string) =>
  text.match(new RegExp(`^syncward_environment_pinned\\{app="${APP}",environment="dev"\\} (\\d)$`, "m"))?.[1];

describe("/rollback, the pin through pushes and a restart, then /unpin", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let stateNs: string;
  let ns: string;
  const commits: string[] = [];
  let a: Instance;
  let b: Instance | undefined;

  /** What dev runs: `settings`'s value and the ConfigMaps syncward manages there. */
  const live = async () => {
    const settings = (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as
      | { data?: { v?: string } }
      | undefined;
    const names = (await cluster.client.list("v1", "ConfigMap", { namespace: ns })).items
      .map((o) => o.metadata.name ?? "")
      .filter((n) => n !== "kube-root-ca.crt")
      .sort();
    return { settings: settings?.data?.v, names };
  };
  const entry2 = { settings: "2", names: ["flag", "settings"] };

  const comment = async (app: TestApp, id: number, body: string) => {
    mockReactions(app.mock, id, "rocket");
    mockPermission(app.mock, "alice", "write");
    await app.probot.receive(issueCommentEvent({ body, sender: { login: "alice" }, commentId: id }));
    await app.settle();
    const reply = github.comments.at(-1);
    assert.equal(reply?.issue, 7);
    return reply?.body ?? "";
  };
  const push = async (app: TestApp, i: number) => {
    const before = repo.head();
    commits[i] = repo.commit(files(i), `version ${i}`);
    await app.probot.receive(
      pushEvent({ after: commits[i], before, modified: ["app/settings.yaml"], sender: { login: "bob" } }),
    );
    await app.settle();
  };
  const lastCheck = (sha: string) =>
    github.checks.filter((c) => c.head_sha === sha && c.name === CHECK).at(-1);
  const firstLine = (sha: string) => lastCheck(sha)?.output?.summary.split("\n")[0] ?? "";
  const lastDescription = (sha: string) => {
    const ids = new Set(
      github.deployments.filter((d) => d.environment === "dev" && d.ref === sha).map((d) => d.id),
    );
    return github.statuses.filter((s) => ids.has(s.deployment)).at(-1);
  };
  const state = async (i: Instance) => {
    const r = i.app.parts.runtimes.all()[0]!.reconciler;
    return r.store.load(r.controller("dev").instance);
  };
  const short = (i: number) => commits[i]!.slice(0, 7);
  const editByHand = () =>
    kubectl(["-n", ns, "patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"v":"edited"}}']);

  before(async () => {
    ns = await cluster.namespace("ghpin");
    stateNs = await cluster.stateNamespace("ghpin-state");
    repo = makeRepo(files(1));
    commits[1] = repo.head();
    github = new FakeGitHub(
      repo,
      `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true, selfHeal: true}}\n`,
    );
    a = await instance(stateNs, github);
  });

  after(async () => {
    await a.close();
    await b?.close();
  });

  /** Three pushes deploy history entries 1..3; `/rollback dev 2` puts entry 2 back and pins it. */
  const rollBack = async () => {
    await a.app.probot.receive(
      pushEvent({ after: commits[1], before: "0".repeat(40), modified: ["app/settings.yaml"] }),
    );
    await a.app.settle();
    await push(a.app, 2);
    await push(a.app, 3);
    assert.deepEqual(await live(), { settings: "3", names: ["newer", "settings"] });
    assert.deepEqual(
      (await state(a)).history.map((h) => [h.id, h.revision, h.result]),
      [1, 2, 3].map((i) => [i, commits[i], "Succeeded"]),
    );
    await eventually("the gauge to read dev unpinned", async () => pinnedGauge(await a.scrape()) === "0");

    const reply = await comment(a.app, 3001, "/rollback dev 2");
    assert.match(
      reply,
      new RegExp(
        `^\\*\\*dev\\*\\* rolled back to \`${short(2)}\` \\(history 2\\) and is pinned there: .*\\n\\nWhile pinned, automated syncs, promotions and retries hold at \`${short(2)}\` and self-heal defends it; new commits to \`main\` wait until \`/unpin dev\`\\.`,
      ),
    );
    assert.match(reply, /\*\*Next:\*\* comment `\/unpin dev` when `main` is fit to deploy again/);
    assert.deepEqual(await live(), entry2, "entry 2's render: flag back, newer pruned");
    const pinned = `pinned at \`${short(2)}\` by \`alice\` (rollback to history 2); \`/unpin dev\` resumes`;
    const line = firstLine(commits[2]!);
    assert.ok(line.startsWith("**dev** runs ") && line.includes(`; ${pinned}`), line);
    assert.equal(
      lastDescription(commits[2]!)?.description,
      `pinned at ${short(2)} by alice (rollback to history 2); /unpin dev resumes`,
    );
    assert.equal(lastDescription(commits[2]!)?.state, "success");
    const last = (await state(a)).history.at(-1);
    assert.equal(last?.trigger, "rollback");
    assert.equal(last?.revision, commits[2]);
    await eventually("the gauge to read the pin", async () => pinnedGauge(await a.scrape()) === "1");
  };

  /** Pushes 4..6 deploy nothing and say why; a hand edit goes back to entry 2's render. */
  const heldByThePin = async () => {
    for (const i of [4, 5, 6]) {
      await push(a.app, i);
      assert.deepEqual(await live(), entry2, `push ${i} deployed nothing`);
      const check = lastCheck(commits[i]!);
      assert.ok(check, `push ${i} has a check run`);
      assert.match(check.output?.title ?? "", new RegExp(`pinned at ${short(2)}`));
      assert.match(firstLine(commits[i]!), new RegExp(`pinned at \`${short(2)}\``));
      assert.equal(
        github.deployments.some((d) => d.ref === commits[i]),
        false,
        `no deployment of push ${i}`,
      );
    }
    assert.equal((await state(a)).history.length, 4, "no sync since the rollback");

    editByHand();
    // What the watch of the managed objects does on that edit (this app runs without watches).
    a.app.parts.runtimes.all()[0]!.reconciler.controller("dev").nudge("selfHeal", "syncward");
    await a.app.settle();
    assert.deepEqual(await live(), entry2, "self-heal reverted the edit to the pinned render");
    a.app.mock.assertDone();
  };

  /** A new instance on the same state and GitHub: its first pass holds the pin. */
  const restarted = async () => {
    await a.close();
    // Edited while no syncward runs: the new instance's first pass reverts it, to the pin.
    editByHand();
    b = await instance(stateNs, github, { restarted: true });
    assert.deepEqual(await bootstrapAsRestarted(b.app), ["acme/shop"]);
    await eventually("the new instance's first pass", async () => (await live()).settings !== "edited");
    await b.app.settle();
    assert.deepEqual(await live(), entry2, "still at entry 2's render after the restart");
    assert.equal((await state(b)).pin?.historyId, 2);
    await eventually("the new instance's gauge", async () => pinnedGauge(await b!.scrape()) !== undefined);
    assert.equal(pinnedGauge(await b.scrape()), "1");
  };

  /** `/unpin dev` deploys the head of main; nothing shows the pin any more. */
  const unpinned = async (i: Instance) => {
    const reply = await comment(i.app, 3002, "/unpin dev");
    assert.match(
      reply,
      new RegExp(
        `^\\*\\*dev\\*\\* is unpinned: it held \`${short(2)}\` \\(rollback to history 2 by \`alice\`\\)\\. The next sync takes the head of \`main\`\\.`,
      ),
    );
    await eventually("the head deployed", async () => (await live()).settings === "6");
    await i.app.settle();
    assert.deepEqual(await live(), { settings: "6", names: ["newer", "settings"] });
    const head = commits[6]!;
    assert.equal(lastCheck(head)?.conclusion, "success");
    assert.match(firstLine(head), new RegExp(`^\\*\\*dev\\*\\* runs \\S*${head.slice(0, 7)}`));
    assert.doesNotMatch(`${lastCheck(head)?.output?.title}\n${lastCheck(head)?.output?.summary}`, /pinned/);
    assert.equal(lastDescription(head)?.state, "success");
    assert.doesNotMatch(lastDescription(head)?.description ?? "", /pinned/);
    assert.deepEqual(
      (await state(i)).history.slice(-2).map((h) => [h.trigger === "unpin", h.revision, h.result]),
      [
        [true, commits[2], "Succeeded"],
        [false, head, "Succeeded"],
      ],
      "history: the unpin, then the sync of the head",
    );
    assert.equal((await state(i)).pin, undefined);
    await eventually("the gauge to drop the pin", async () => pinnedGauge(await i.scrape()) === "0");
    i.app.mock.assertDone();
  };

  // One test: each step means something only after the ones before it.
  it("rolled back and pinned by a comment; pushes and a restart hold; /unpin resumes the branch", async () => {
    await rollBack();
    await heldByThePin();
    await restarted();
    await unpinned(b!);
  });
});

describe("/rollback of a frozen environment", () => {
  it("is refused by the freeze before anything is pinned: the cluster, the pin and the deployments stay", async () => {
    const ns = await cluster.namespace("ghpin-frozen");
    const stateNs = await cluster.stateNamespace("ghpin-frozen-state");
    const repo = makeRepo(files(1));
    const c1 = repo.head();
    const github = new FakeGitHub(
      repo,
      `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true, selfHeal: true}}\n`,
    );
    const i = await instance(stateNs, github);
    try {
      const { app } = i;
      await app.probot.receive(pushEvent({ after: c1, before: "0".repeat(40), modified: [] }));
      await app.settle();
      const c2 = repo.commit(files(2), "version 2");
      await app.probot.receive(pushEvent({ after: c2, before: c1, modified: [] }));
      await app.settle();
      const comment = async (id: number, body: string) => {
        mockReactions(app.mock, id, body.startsWith("/freeze") ? "rocket" : "confused");
        mockPermission(app.mock, "alice", "write");
        await app.probot.receive(issueCommentEvent({ body, sender: { login: "alice" }, commentId: id }));
        await app.settle();
        return github.comments.at(-1)?.body ?? "";
      };
      assert.match(await comment(4001, '/freeze dev "incident"'), /^\*\*dev\*\* is frozen by @alice/);
      const statuses = github.statuses.length;

      const reply = await comment(4002, "/rollback dev 1");
      assert.match(
        reply,
        new RegExp(
          `^\\*\\*dev\\*\\*: rolling back to \`${c1.slice(0, 7)}\` is \`refused: .*frozen by @alice.*\`\\. Nothing was changed\\.`,
        ),
      );
      assert.match(
        reply,
        /\*\*Next:\*\* once what the message names is resolved, comment `\/rollback dev` again\.$/,
      );
      const r = app.parts.runtimes.all()[0]!.reconciler;
      const state = await r.store.load(r.controller("dev").instance);
      assert.equal(state.pin, undefined, "nothing pinned");
      assert.equal(state.lastSyncedRevision, c2);
      const settings = (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as {
        data?: { v?: string };
      };
      assert.equal(settings.data?.v, "2", "the cluster still runs the head");
      assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "flag"), "entry 2's flag is still there");
      assert.equal(github.statuses.length, statuses, "no deployment status moved");
      await eventually("the gauge to read dev unpinned", async () => pinnedGauge(await i.scrape()) === "0");
      // Every mock used (the reactions and permission of each comment), no request GitHub would reject.
      app.mock.assertDone();
    } finally {
      await i.close();
    }
  });
});

describe("/rollback on a gated environment, then /approve of a fix", () => {
  it("the fix's check run says approving it ends the pin; /approve deploys it and ends the pin", async () => {
    const ns = await cluster.namespace("ghpin-gated");
    const stateNs = await cluster.stateNamespace("ghpin-gated-state");
    const repo = makeRepo(files(1));
    const c: string[] = [];
    c[1] = repo.head();
    const github = new FakeGitHub(
      repo,
      `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true, selfHeal: true}}\n    approval: {users: [carol]}\n`,
    );
    const i = await instance(stateNs, github);
    try {
      const { app } = i;
      // Pull request #7 (bob's) brought the fix: c2 and c3, merged as c3.
      mockMergedPull(app, () => [c[2]!, c[3]!]);
      const comment = async (id: number, login: string, body: string) => {
        await commentOnPull(app, id, login, body);
        return github.comments.at(-1)?.body ?? "";
      };
      const settings = async () =>
        (
          (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as
            | { data?: { v?: string } }
            | undefined
        )?.data?.v;
      // c1 and c2 deployed by an operator (the CLI's path, which needs no approval).
      await app.probot.receive(pushEvent({ after: c[1], before: "0".repeat(40), modified: [] }));
      await app.settle();
      const r = app.parts.runtimes.all()[0]!.reconciler;
      const dev = r.controller("dev");
      await dev.sync({ trigger: "cli", actor: "operator", revision: c[1] });
      c[2] = repo.commit(files(2), "version 2");
      await dev.sync({ trigger: "cli", actor: "operator", revision: c[2] });
      assert.equal(await settings(), "2");

      assert.match(await comment(5001, "alice", "/rollback dev 1"), /^\*\*dev\*\* rolled back to /);
      assert.equal(await settings(), "1");

      // The fix lands on main: its check run asks for approval, and says what approving does.
      c[3] = repo.commit(files(3), "fix");
      await app.probot.receive(
        pushEvent({ after: c[3], before: c[2], modified: [], sender: { login: "bob" } }),
      );
      await app.settle();
      assert.equal(await settings(), "1", "nothing deploys before the approval");
      const waiting = github.checks.filter((x) => x.name === CHECK && x.head_sha === c[3]).at(-1);
      assert.match(
        `${waiting?.output?.title}\n${waiting?.output?.summary}`,
        new RegExp(
          `pinned at ${c[1]!.slice(0, 7)} by alice \\(rollback to history 1\\); /approve dev deploys this commit and ends the pin, or /unpin dev`,
        ),
      );

      const reply = await comment(5002, "carol", "/approve dev");
      assert.match(
        reply,
        new RegExp(
          `^Approved \`${c[3]!.slice(0, 7)}\` for \\*\\*dev\\*\\* \\(1/1\\); deploying; this ends the pin at \`${c[1]!.slice(0, 7)}\` \\(rollback to history 1 by alice\\)\\.`,
        ),
      );
      await eventually("the fix deployed", async () => (await settings()) === "3");
      await app.settle();
      const state = await r.store.load(dev.instance);
      assert.equal(state.pin, undefined, "the pin ended");
      const [ended, synced] = state.history.slice(-2);
      assert.equal(ended?.trigger, "unpin");
      assert.match(ended?.message ?? "", /ended by the approval of [0-9a-f]{7} by @carol/);
      assert.equal(synced?.revision, c[3]);
      assert.equal(lastConclusion(github, c[3]!), "success");
      app.mock.assertDone();
    } finally {
      await i.close();
    }
  });
});

function lastConclusion(github: FakeGitHub, sha: string): string | undefined {
  return github.checks.filter((x) => x.name === CHECK && x.head_sha === sha).at(-1)?.conclusion;
}
