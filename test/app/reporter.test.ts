// What the reconciler's self-heal and drift-fight events look like on GitHub: check runs whose
// requests are validated against GitHub's OpenAPI description.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import pino from "pino";
import { outcomeWithoutWork } from "../../src/engine/sync.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { GitHubReporter, type ReporterOptions } from "../../src/github/reporter.ts";
import { KubeApiError, KubeConnectionError } from "../../src/kube/errors.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import type { Reconciler } from "../../src/reconciler/reconciler.ts";
import { defaultState } from "../../src/state/store.ts";
import { REPO_PATH } from "../support/app.ts";
import { envConfig } from "../support/env.ts";
import { createTestProbot, mockGitHub } from "../support/github.ts";
import { mockRange } from "../support/github-range.ts";

const mock = mockGitHub();
afterEach(() => mock.reset());

const env = envConfig("shop", { syncPolicy: { automated: { selfHeal: true } } });
const reconciler = {
  controller: () => ({ env, instance: "acme-shop.dev" }),
  store: { load: async () => defaultState("acme-shop.dev") },
} as unknown as Reconciler;

async function reporter(
  over: Partial<Pick<ReporterOptions, "reconciler" | "log" | "retryMs" | "progressEveryMs">> = {},
): Promise<GitHubReporter> {
  const probot = await createTestProbot();
  const gh = (await probot.auth()) as unknown as Octokit;
  return new GitHubReporter({
    repo: { owner: "acme", repo: "shop" },
    htmlUrl: "https://github.com/acme/shop",
    octokit: async () => gh,
    reconciler,
    log: pino({ level: "silent" }),
    ...over,
  });
}

/** A logger whose error lines land in `lines`. */
function errorLog(): { log: ReporterOptions["log"]; lines: string[] } {
  const lines: string[] = [];
  return { log: pino({ level: "error" }, { write: (l: string) => lines.push(l) }), lines };
}

/** A reconciler whose environment's `inspect` answers with each of `answers` in turn (an Error is thrown). */
function inspecting(answers: Array<Error | "in sync">): Reconciler {
  let n = 0;
  const plan = { steps: [], unchanged: [], prunes: [], requiresPruning: [], onFail: [] };
  return {
    controller: () => ({
      env,
      instance: "acme-shop.dev",
      inspect: async () => {
        const answer = answers[Math.min(n++, answers.length - 1)];
        if (answer instanceof Error) throw answer;
        return { assessment: { plan } };
      },
    }),
    store: { load: async () => defaultState("acme-shop.dev") },
  } as unknown as Reconciler;
}

const outOfSync: ReconcilerEvent = {
  type: "outOfSync",
  instance: "acme-shop.dev",
  env: "dev",
  revision: "a".repeat(40),
  drifted: [],
  requiresPruning: [],
  reason: "Git moved on",
};

const until = async (what: () => boolean) => {
  for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(what(), "condition never held");
};

const sha = "a".repeat(40);
type Check = { name: string; conclusion: string; output: { title: string; summary: string; text?: string } };

function capture(): Check[] {
  const seen: Check[] = [];
  mock.api
    .post(`${REPO_PATH}/check-runs`, (b: Check) => {
      seen.push(b);
      return true;
    })
    .reply(201, { id: 1, html_url: "https://github.com/acme/shop/runs/1" });
  return seen;
}

describe("GitHub reporter", () => {
  it("reports a drift fight loudly: failure, the object, the fields, the field manager, the fix", async () => {
    const r = await reporter();
    const seen = capture();
    const event: ReconcilerEvent = {
      type: "driftFight",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      fight: {
        object: "deployment.apps/web in shop",
        key: "apps/Deployment:shop/web",
        fields: ["/spec/replicas"],
        managers: ["horizontal-pod-autoscaler"],
        heals: 3,
        windowMinutes: 10,
        backoffMs: 2000,
        ignoreSnippet:
          "ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    name: web\n    jsonPointers:\n      - /spec/replicas",
      },
    };
    r.handle(event);
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.name, "syncward / dev");
    assert.equal(seen[0]?.conclusion, "failure");
    assert.equal(seen[0]?.output.title, "Drift fight on deployment.apps/web in shop");
    assert.match(seen[0]?.output.summary ?? "", /horizontal-pod-autoscaler/);
    assert.match(seen[0]?.output.summary ?? "", /\/spec\/replicas/);
    assert.match(seen[0]?.output.summary ?? "", /ignoreDifferences:/);
  });

  it("a revision the loop holds for missing required checks gets a neutral check run naming them", async () => {
    const r = await reporter();
    const seen = capture();
    r.handle({
      type: "waiting",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      reason: "waiting for checks to pass on aaaaaaa: ci/test, ci/lint",
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "neutral");
    assert.equal(seen[0]?.output.title, "Waiting: waiting for checks to pass on aaaaaaa: ci/test, ci/lint");
    assert.match(seen[0]?.output.summary ?? "", /ci\/test, ci\/lint\. Nothing was applied\./);
  });

  it("a commit a rollback's pin holds back gets a neutral check run that names the pin and the unpin", async () => {
    const pin = {
      revision: "b".repeat(40),
      historyId: 2,
      by: "alice",
      at: "2026-06-01T10:00:00Z",
      reason: "",
    };
    const pinned = {
      ...reconciler,
      store: {
        load: async () => ({ ...defaultState("acme-shop.dev"), lastSyncedRevision: pin.revision, pin }),
      },
    } as unknown as Reconciler;
    const r = await reporter({ reconciler: pinned });
    const seen = capture();
    r.handle({
      type: "waiting",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      reason: "pinned at bbbbbbb by alice (rollback to history 2); /unpin dev resumes",
      pinned: true,
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "neutral");
    assert.equal(
      seen[0]?.output.title,
      "Waiting: pinned at bbbbbbb by alice (rollback to history 2); /unpin dev resumes",
    );
    assert.match(
      seen[0]?.output.summary.split("\n")[0] ?? "",
      /; pinned at `bbbbbbb` by `alice` \(rollback to history 2\); `\/unpin dev` resumes; /,
    );
    // Not "it syncs by itself": a pin waits for a person.
    assert.match(
      seen[0]?.output.text ?? "",
      /\*\*Next:\*\* comment `\/unpin dev` when `main` is fit to deploy again: until then dev stays at `bbbbbbb`\.$/,
    );
  });

  it("a refused request (a Sync click on a frozen environment) gets a check run that says why", async () => {
    const r = await reporter();
    const seen = capture();
    const message =
      "refused: frozen by @alice since 2026-06-01T10:00:00Z (release night); unfreeze dev first or force the sync";
    r.handle({
      type: "refused",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      trigger: "comment",
      actor: "bob",
      outcome: outcomeWithoutWork(sha, "Refused", message),
    });
    await r.idle();
    mock.assertDone();
    assert.equal(
      seen[0]?.output.title,
      "Refused: frozen by @alice since 2026-06-01T10:00:00Z (release night); unfreeze dev first or force the sync",
    );
    assert.notEqual(seen[0]?.conclusion, "success");
  });

  it("reports a self-heal with the fields it reverted", async () => {
    const r = await reporter();
    const seen = capture();
    const now = new Date().toISOString();
    r.handle({
      type: "selfHealed",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      drifted: ["apps/Deployment:shop/web /spec/replicas"],
      outcome: {
        revision: sha,
        phase: "Succeeded",
        message: "0 created, 1 configured",
        startedAt: now,
        finishedAt: now,
        writes: 1,
        dryRun: false,
        inventory: [],
        retryable: false,
        totals: { created: 0, configured: 1, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
        resources: [
          {
            group: "apps",
            kind: "Deployment",
            namespace: "shop",
            name: "web",
            status: "Synced",
            action: "configured",
            message: "deployment.apps/web configured",
            drifted: ["/spec/replicas"],
          },
        ],
      },
      entry: {
        id: 2,
        startedAt: now,
        finishedAt: now,
        revision: sha,
        trigger: "selfHeal",
        actor: "syncward",
        result: "Succeeded",
        message: "",
        counts: { created: 0, configured: 1, pruned: 0, failed: 0 },
      },
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "success");
    assert.match(
      seen[0]?.output.summary ?? "",
      /Self-heal reverted out-of-band changes: `apps\/Deployment:shop\/web \/spec\/replicas`\./,
    );
  });

  it("flags a security-relevant revert on the check run of the current revision", async () => {
    const r = await reporter();
    const seen = capture();
    const now = new Date().toISOString();
    r.handle({
      type: "selfHealed",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      drifted: ["apps/Deployment:shop/web /spec/template/spec/containers/1"],
      outcome: {
        revision: sha,
        phase: "Succeeded",
        message: "0 created, 1 configured",
        startedAt: now,
        finishedAt: now,
        writes: 2,
        dryRun: false,
        inventory: [],
        retryable: false,
        totals: { created: 0, configured: 1, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
        resources: [],
      },
      entry: {
        id: 2,
        startedAt: now,
        finishedAt: now,
        revision: sha,
        trigger: "selfHeal",
        actor: "syncward",
        result: "Succeeded",
        message: "",
        counts: { created: 0, configured: 1, pruned: 0, failed: 0 },
      },
      reverted: [
        {
          object: "apps/Deployment:shop/web",
          path: "/spec/template/spec/containers/1",
          kind: "extra",
          manager: "kubectl-patch",
          operation: "Update",
          at: now,
          value: '{"name":"miner","image":"evil:1"}',
          trusted: false,
          security: "new container, image evil:1",
        },
      ],
    });
    await r.idle();
    mock.assertDone();
    const summary = seen[0]?.output.summary ?? "";
    assert.match(summary, /#### ⚠️ Self-heal reverted 1 security-relevant change/);
    assert.match(
      summary,
      /⚠️ new container, image evil:1 \| `deploy\/web` `…\/containers\/1` \| `kubectl-patch` Update/,
    );
    // What matters most is the headline: not a green tick, but someone to find.
    assert.equal(seen[0]?.conclusion, "action_required");
    assert.equal(seen[0]?.output.title, "Reverted an intruder's changes to deploy/web: new container evil:1");
  });

  it("reports risky undeclared objects on a check run, and stays quiet about harmless ones", async () => {
    const r = await reporter();
    const seen = capture();
    r.handle({
      type: "orphans",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      orphans: [{ object: "configmap/notes in shop" }],
    });
    r.handle({
      type: "orphans",
      instance: "acme-shop.dev",
      env: "dev",
      revision: sha,
      orphans: [{ object: "daemonset.apps/miner in shop", risk: "a DaemonSet runs on every node" }],
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen.length, 1, "one check run: the risky report");
    assert.match(
      seen[0]?.output.summary ?? "",
      /1 risky object not declared in Git[\s\S]*daemonset\.apps\/miner in shop/,
    );
  });

  it("a failed deployment synced again by hand gets the new try's statuses, on the same deployment, and each try a live check run", async () => {
    const r = await reporter();
    const runs: string[] = [];
    mock.api
      .post(`${REPO_PATH}/check-runs`, (b: { status: string }) => {
        runs.push(`create ${b.status}`);
        return true;
      })
      .times(2)
      .reply(201, () => ({ id: 100 + runs.length, html_url: "https://github.com/acme/shop/runs/1" }));
    mock.api
      .patch(/\/check-runs\/\d+$/, (b: { status: string; conclusion: string }) => {
        runs.push(`update ${b.status} ${b.conclusion}`);
        return true;
      })
      .times(2)
      .reply(200, (uri: string) => ({
        id: Number(uri.split("/").at(-1)),
        html_url: "https://github.com/acme/shop/runs/1",
      }));
    mock.api
      .get(`${REPO_PATH}/deployments`)
      .query({ sha, environment: "dev", per_page: "100" })
      .reply(200, []);
    mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 77 });
    const states: string[] = [];
    mock.api
      .post(`${REPO_PATH}/deployments/77/statuses`, (b: { state: string }) => {
        states.push(b.state);
        return true;
      })
      .times(4)
      .reply(201, { id: 1 });
    for (const phase of ["Failed", "Succeeded"] as const) {
      r.handle({
        type: "syncStarted",
        instance: "acme-shop.dev",
        env: "dev",
        revision: sha,
        trigger: "comment",
        actor: "alice",
        changes: 1,
      });
      r.handle(
        syncedEvent(
          { instance: "acme-shop.dev", env: "dev", revision: sha, trigger: "comment", actor: "alice" },
          phase,
        ),
      );
      await r.idle();
    }
    mock.assertDone();
    // A deployment that starts at once skips `queued`.
    assert.deepEqual(states, ["in_progress", "failure", "in_progress", "success"]);
    assert.deepEqual(runs, [
      "create in_progress",
      "update completed failure",
      "create in_progress",
      "update completed neutral", // the fixture's result lists no object: never a green 0/0
    ]);
  });
});

describe("GitHub reporter when something other than GitHub fails", () => {
  it("a report whose cluster read failed (connection refused) waits and is sent once the cluster answers", async () => {
    const { log, lines } = errorLog();
    const r = await reporter({
      reconciler: inspecting([
        new KubeConnectionError("connect ECONNREFUSED 127.0.0.1:6443", "ECONNREFUSED"),
        "in sync",
      ]),
      log,
      retryMs: { initial: 5, max: 20 },
    });
    const seen = capture();
    r.handle(outOfSync);
    await until(() => seen.length === 1);
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "neutral");
    assert.deepEqual(lines, [], "nothing was dropped");
  });

  it("a report the cluster refuses for good is dropped with the cluster's reason, not blamed on GitHub", async () => {
    const { log, lines } = errorLog();
    const forbidden = new KubeApiError(
      "deployments.apps is forbidden",
      403,
      "Forbidden",
      "GET",
      "/apis/apps/v1/deployments",
    );
    const r = await reporter({ reconciler: inspecting([forbidden]), log });
    r.handle(outOfSync);
    await r.idle();
    assert.equal(r.backlog, 0);
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? "", /preparing it failed: deployments.apps is forbidden/);
    assert.doesNotMatch(lines[0] ?? "", /GitHub refused/);
  });
});

/** The reconciler's "synced" event for `o.revision`, with its history entry, as the reporter gets it. */
function syncedEvent(
  o: { instance: string; env: string; revision: string; trigger: "comment" | "push"; actor: string },
  phase: "Failed" | "Succeeded",
): ReconcilerEvent {
  const result = { ...outcome(phase), revision: o.revision };
  return {
    ...o,
    type: "synced",
    outcome: result,
    entry: {
      id: 1,
      startedAt: result.startedAt,
      finishedAt: result.finishedAt,
      revision: o.revision,
      trigger: o.trigger,
      actor: o.actor,
      result: phase,
      message: "",
      counts: { created: 0, configured: 1, pruned: 0, failed: phase === "Failed" ? 1 : 0 },
    },
  };
}

function outcome(phase: "Failed" | "Succeeded") {
  const at = "2026-01-01T00:00:00.000Z";
  return {
    revision: sha,
    phase,
    message: phase === "Failed" ? "1 failed" : "0 created, 1 configured",
    startedAt: at,
    finishedAt: at,
    writes: 1,
    dryRun: false,
    inventory: [],
    retryable: false,
    totals: {
      created: 0,
      configured: 1,
      unchanged: 0,
      pruned: 0,
      failed: phase === "Failed" ? 1 : 0,
      skipped: 0,
    },
    resources: [],
  };
}

describe("GitHub reporter: the deployment timeline of a production environment", () => {
  const prod = envConfig("shop-prod", { production: true, approval: { users: ["carol"] } });
  const prodReconciler = {
    controller: () => ({ env: prod, instance: "acme-shop.prod" }),
    store: { load: async () => defaultState("acme-shop.prod") },
  } as unknown as Reconciler;
  const base = { instance: "acme-shop.prod", env: "prod" } as const;
  const [a, b, c] = ["a", "b", "c"].map((x) => x.repeat(40)) as [string, string, string];

  /** Every deployment status sent, as `id state description`. */
  function captureTimeline(): string[] {
    const seen: string[] = [];
    mock.api.get(`${REPO_PATH}/deployments`).query(true).reply(200, []).persist();
    let next = 500;
    mock.api
      .post(`${REPO_PATH}/deployments`)
      .reply(201, () => ({ id: ++next }))
      .persist();
    mock.api
      .post(/\/deployments\/\d+\/statuses$/, () => true)
      .reply(201, (uri: string, body: { state: string; description: string }) => {
        seen.push(`${uri.split("/").at(-2)} ${body.state} ${body.description}`);
        return { id: 1 };
      })
      .persist();
    mock.api
      .post(`${REPO_PATH}/check-runs`)
      .reply(201, { id: 1, html_url: "https://github.com/acme/shop/runs/1" })
      .persist();
    mock.api
      .patch(/\/check-runs\/\d+$/)
      .reply(200, { id: 1, html_url: "https://github.com/acme/shop/runs/1" })
      .persist();
    return seen;
  }

  const waiting = (revision: string): ReconcilerEvent => ({
    ...base,
    type: "awaitingApproval",
    revision,
    trigger: "push",
    actor: "alice",
    approvals: [],
    needed: 1,
  });
  const started = (revision: string): ReconcilerEvent => ({
    ...base,
    type: "syncStarted",
    revision,
    trigger: "comment",
    actor: "carol",
    changes: 1,
  });
  const synced = (revision: string) =>
    syncedEvent({ ...base, revision, trigger: "comment", actor: "carol" }, "Succeeded");

  it("a waiting deployment a newer commit supersedes ends inactive; a success retires the one before it", async () => {
    const r = await reporter({ reconciler: prodReconciler });
    const timeline = captureTimeline();
    // Each waiting check run shows what would be deployed (no sync recorded: the commit alone).
    for (const head of [a, b, c])
      mockRange(mock, { head, commits: [{ sha: head, author: "alice" }], pulls: [] });
    for (const event of [waiting(a), started(a), synced(a), waiting(b), waiting(c), started(c), synced(c)]) {
      r.handle(event);
      await r.idle();
    }
    mock.assertDone();
    assert.deepEqual(timeline, [
      "501 queued waiting for approval (0/1)",
      "501 in_progress syncing 1 change(s)",
      "501 success 0 created, 1 configured",
      "502 queued waiting for approval (0/1)",
      "502 inactive superseded by ccccccc",
      "503 queued waiting for approval (0/1)",
      "503 in_progress syncing 1 change(s)",
      "503 success 0 created, 1 configured",
      "501 inactive replaced by ccccccc",
    ]);
  });
});

describe("GitHub reporter: a live check run", () => {
  const ev = { instance: "acme-shop.dev", env: "dev", revision: sha } as const;

  it("shows the waves of a slow sync, at most one update per interval from the run's creation, then the result", async () => {
    const r = await reporter({ progressEveryMs: 50 });
    const runs: string[] = [];
    mock.api
      .post(`${REPO_PATH}/check-runs`, (b: { status: string; output: { title: string } }) => {
        runs.push(`create ${b.status}: ${b.output.title}`);
        return true;
      })
      .reply(201, { id: 31, html_url: "https://github.com/acme/shop/runs/31" });
    mock.api
      .patch(`${REPO_PATH}/check-runs/31`, (b: { status?: string; output: { title: string } }) => {
        runs.push(`update ${b.status ?? "-"}: ${b.output.title}`);
        return true;
      })
      .times(2)
      .reply(200, { id: 31, html_url: "https://github.com/acme/shop/runs/31" });
    mock.api.get(`${REPO_PATH}/deployments`).query(true).reply(200, []);
    mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 88 });
    mock.api.post(`${REPO_PATH}/deployments/88/statuses`).times(2).reply(201, { id: 1 });
    r.handle({ ...ev, type: "syncStarted", trigger: "push", actor: "alice", changes: 3 });
    r.handle({ ...ev, type: "syncProgress", wave: 0, objects: 2 }); // as the run is created: not sent
    await new Promise((resolve) => setTimeout(resolve, 80));
    r.handle({ ...ev, type: "syncProgress", wave: 1, objects: 1 }); // an interval later: sent
    r.handle({ ...ev, type: "syncProgress", wave: 2, objects: 1 }); // right after it: not sent
    r.handle(syncedEvent({ ...ev, trigger: "push", actor: "alice" }, "Succeeded"));
    await r.idle();
    mock.assertDone();
    assert.deepEqual(runs, [
      "create in_progress: Syncing: syncing 3 change(s)",
      "update -: Syncing: wave 1 (1 object(s))",
      "update completed: Nothing to sync", // the fixture's result lists no object
    ]);
  });

  it("a waiting environment that is frozen is neutral, not action_required", async () => {
    const frozen = {
      controller: () => ({ env, instance: "acme-shop.dev" }),
      store: {
        load: async () => ({
          ...defaultState("acme-shop.dev"),
          freeze: { by: "alice", at: "2026-12-01T00:00:00Z" },
        }),
      },
    } as unknown as Reconciler;
    const r = await reporter({ reconciler: frozen });
    const seen = capture();
    mock.api.get(`${REPO_PATH}/deployments`).query(true).reply(200, []);
    mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 89 });
    mock.api.post(`${REPO_PATH}/deployments/89/statuses`).reply(201, { id: 1 });
    mockRange(mock, { head: sha, commits: [{ sha, author: "alice" }], pulls: [] });
    r.handle({ ...ev, type: "awaitingApproval", trigger: "push", actor: "alice", approvals: [], needed: 1 });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "neutral");
  });
});

describe("GitHub reporter: the PR comment of a merge waiting for approval", () => {
  it("mentions the configured approvers who may approve it, not one who contributed or already approved", async () => {
    const prod = envConfig("shop-prod", {
      name: "prod",
      production: true,
      approval: { users: ["carol", "alice"], teams: ["acme/sre"] },
    });
    const r = await reporter({
      reconciler: {
        controller: () => ({ env: prod, instance: "acme-shop.prod" }),
        store: { load: async () => defaultState("acme-shop.prod") },
      } as unknown as Reconciler,
    });
    const merge = "d".repeat(40);
    r.linkPullRequest(merge, 7);
    mock.api.get(`${REPO_PATH}/deployments`).query(true).reply(200, []);
    mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: 61 });
    mock.api.post(`${REPO_PATH}/deployments/61/statuses`).reply(201, { id: 1 });
    mock.api
      .post(`${REPO_PATH}/check-runs`)
      .reply(201, { id: 62, html_url: "https://github.com/acme/shop/runs/62" });
    mockRange(mock, { head: merge, commits: [{ sha: merge, author: "alice" }], pulls: [] });
    let comment = "";
    mock.api
      .post(`${REPO_PATH}/issues/7/comments`, (b: { body: string }) => {
        comment = b.body;
        return true;
      })
      .reply(201, { id: 63 });
    r.handle({
      instance: "acme-shop.prod",
      env: "prod",
      revision: merge,
      type: "awaitingApproval",
      trigger: "merge",
      actor: "bob",
      approvals: ["carol"],
      needed: 2,
    });
    await r.idle();
    mock.assertDone();
    const row = comment.split("\n").find((l) => l.startsWith("| `prod`")) ?? "";
    assert.match(row, / approvers: @acme\/sre \|$/);
    assert.doesNotMatch(row, /@alice|@carol/);
    // The gate's count, as the check run says it, and a link to that check run.
    assert.match(row, /\(1 of 2 approvals; 1 more needed\)/);
    assert.match(row, /\[details\]\(https:\/\/github\.com\/acme\/shop\/runs\/62\)/);
    assert.match(row, /\[`ddddddd`\]\(https:\/\/github\.com\/acme\/shop\/commit\/d{40}\)/);
  });
});

describe("GitHub reporter: an automatic rollback", () => {
  const bad = "c".repeat(40);
  const good = "b".repeat(40);
  const note = {
    from: bad,
    reason: `ccccccc stayed Degraded for 5m (since 2026-06-01T10:00:00.000Z)`,
    evidence: [
      "ccccccc: Degraded since 2026-06-01T10:00:00.000Z",
      "bbbbbbb: Healthy from 2026-06-01T09:00:00.000Z (history 2)",
    ],
  };
  const pinned = {
    ...reconciler,
    store: {
      load: async () => ({
        ...defaultState("acme-shop.dev"),
        lastSyncedRevision: good,
        pin: {
          revision: good,
          historyId: 2,
          by: "syncward",
          at: "2026-06-01T10:05:00Z",
          reason: note.reason,
        },
      }),
    },
  } as unknown as Reconciler;

  it("fails the bad commit's check run with the reason and evidence, and says so on the PR that brought it", async () => {
    const r = await reporter({ reconciler: pinned });
    const seen = capture();
    // Not a merge this replica saw: the pull request is asked of GitHub.
    mock.api.get(`${REPO_PATH}/commits/${bad}/pulls`).reply(200, [
      { number: 5, merged_at: null, state: "open" },
      { number: 9, merged_at: "2026-06-01T09:59:00Z", state: "closed" },
    ]);
    let comment = "";
    mock.api
      .post(`${REPO_PATH}/issues/9/comments`, (b: { body: string }) => {
        comment = b.body;
        return true;
      })
      .reply(201, { id: 70 });
    r.handle({
      type: "autoRollback",
      instance: "acme-shop.dev",
      env: "dev",
      revision: bad,
      to: good,
      note,
      outcome: outcomeWithoutWork(good, "Succeeded", "synced 3 objects"),
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "failure");
    assert.equal(seen[0]?.output.title, "Rolled back automatically to bbbbbbb");
    const all = `${seen[0]?.output.summary}\n${seen[0]?.output.text}`;
    assert.match(all, /\*\*Automatic rollback\*\*: ccccccc stayed Degraded for 5m/);
    assert.match(all, /Evidence: ccccccc: Degraded since .*; bbbbbbb: Healthy from .*\(history 2\)/);
    assert.match(
      all,
      /\*\*Next:\*\* fix ccccccc in Git and push; `\/unpin dev` then deploys the branch head again/,
    );
    const row = comment.split("\n").find((l) => l.startsWith("| `dev`")) ?? "";
    assert.match(row, /\| rolled back \|/);
    assert.match(row, /Automatic rollback/);
  });

  it("a release not rolled back says why, and how to go back by hand", async () => {
    const r = await reporter({ reconciler });
    const seen = capture();
    mock.api.get(`${REPO_PATH}/commits/${bad}/pulls`).reply(200, []);
    r.handle({
      type: "autoRollback",
      instance: "acme-shop.dev",
      env: "dev",
      revision: bad,
      refused:
        "going back to bbbbbbb would pass a release that changed CustomResourceDefinition widgets.example.com (rollback.acrossCRDChanges: true allows it)",
    });
    await r.idle();
    mock.assertDone();
    assert.equal(seen[0]?.conclusion, "failure");
    assert.equal(seen[0]?.output.title, "Stayed bad; not rolled back automatically");
    const all = `${seen[0]?.output.summary}\n${seen[0]?.output.text}`;
    assert.match(
      all,
      /\*\*Automatic rollback not done\*\*: going back to bbbbbbb would pass .*acrossCRDChanges/,
    );
    assert.match(all, /\*\*Next:\*\* roll back by hand with `\/rollback dev`, or push a fix\./);
  });
});
