// The check run of a pull request's preview environment, as GitHub receives it (every request
// validated against GitHub's OpenAPI description): named like an environment's, created in
// progress when a sync starts and completed with its result on the same run; a new head commit
// gets a run of its own; never a button (a click would name no environment of the config).
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import pino from "pino";
import type { SyncOutcome } from "../../src/engine/sync.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { previewChecks, reportPreviewCheck } from "../../src/github/preview-check.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import type { Reconciler } from "../../src/reconciler/reconciler.ts";
import { defaultState } from "../../src/state/store.ts";
import { REPO_PATH } from "../support/app.ts";
import { envConfig } from "../support/env.ts";
import { createTestProbot, mockGitHub, takeOpenApiViolations } from "../support/github.ts";
import { resource, resultOf } from "../support/summary-fixtures.ts";

const mock = mockGitHub();
afterEach(() => mock.reset());

const env = { ...envConfig("shop-pr-7"), name: "pr-7-dev" };
const reconciler = {
  controller: () => ({ env, instance: "gh_1-pr-7-dev.pr-7-dev" }),
  store: { load: async () => defaultState("gh_1-pr-7-dev.pr-7-dev") },
} as unknown as Reconciler;
const [a, b] = ["a", "b"].map((x) => x.repeat(40)) as [string, string];
const base = { instance: "gh_1-pr-7-dev.pr-7-dev", env: "pr-7-dev" } as const;

function synced(revision: string, phase: "Succeeded" | "Failed"): ReconcilerEvent {
  const at = new Date().toISOString();
  const failed = phase === "Failed";
  const outcome: SyncOutcome = {
    ...resultOf({
      revision,
      phase,
      resources: [
        resource({ status: failed ? "Failed" : "Synced", ...(failed ? { action: "failed" } : {}) }),
      ],
    }),
    inventory: [],
    retryable: false,
  } as SyncOutcome;
  const entry = {
    id: 1,
    startedAt: at,
    finishedAt: at,
    revision,
    trigger: "push",
    actor: "octocat",
    result: phase,
    message: "",
    counts: { created: 1, configured: 0, pruned: 0, failed: 0 },
  } as const;
  return { ...base, type: "synced", revision, trigger: "push", actor: "octocat", outcome, entry };
}

const started = (revision: string): ReconcilerEvent => ({
  ...base,
  type: "syncStarted",
  revision,
  trigger: "push",
  actor: "octocat",
  changes: 1,
  planned: ["configmap/c create"],
});

/** Check runs as GitHub keeps them: each create, then each update to its id merged in. */
function github(): Array<Record<string, unknown>> {
  const runs: Array<Record<string, unknown>> = [];
  mock.api
    .persist()
    .post(`${REPO_PATH}/check-runs`)
    .reply(201, (_uri, body) => {
      runs.push({ ...(body as object), id: runs.length + 1 });
      return { id: runs.length, html_url: `https://github.com/acme/shop/runs/${runs.length}` };
    })
    .patch(/\/check-runs\/\d+$/)
    .reply(200, (uri, body) => {
      const run = runs[Number(uri.split("/").at(-1)) - 1] as Record<string, unknown>;
      Object.assign(run, body);
      return { id: run.id };
    });
  return runs;
}

async function setup() {
  const gh = (await (await createTestProbot()).auth()) as unknown as Octokit;
  const checks = previewChecks({
    repo: { owner: "acme", repo: "shop" },
    htmlUrl: "https://github.com/acme/shop",
    octokit: async () => gh,
    reconciler,
    log: pino({ level: "silent" }),
  });
  return { gh, runs: github(), checks };
}

describe("a preview environment's check run", () => {
  it("in progress when its sync starts, completed with the sync's result; a new head gets its own", async () => {
    const { gh, runs, checks } = await setup();
    await reportPreviewCheck(checks, gh, started(a));
    assert.deepEqual(
      runs.map((r) => [r.name, r.head_sha, r.status]),
      [["syncward / pr-7-dev", a, "in_progress"]],
    );
    await reportPreviewCheck(checks, gh, synced(a, "Succeeded"));
    await reportPreviewCheck(checks, gh, started(b));
    await reportPreviewCheck(checks, gh, synced(b, "Failed"));
    assert.deepEqual(
      runs.map((r) => [r.head_sha, r.status, r.conclusion]),
      [
        [a, "completed", "success"],
        [b, "completed", "failure"],
      ],
    );
    assert.match(
      String((runs[0]?.output as { summary?: string } | undefined)?.summary),
      /deployment\.apps\/web|Deployment/,
    );
    assert.ok(
      runs.every((r) => r.actions === undefined),
      "no Sync or Freeze button",
    );
    assert.deepEqual(takeOpenApiViolations(), []);
  });

  it("a head that changes nothing the preview deploys completes a run of its own", async () => {
    const { gh, runs, checks } = await setup();
    const at = new Date().toISOString();
    await reportPreviewCheck(checks, gh, {
      ...base,
      type: "unchanged",
      revision: b,
      entry: {
        id: 2,
        startedAt: at,
        finishedAt: at,
        revision: b,
        trigger: "push",
        actor: "octocat",
        result: "Succeeded",
        message: "",
        counts: { created: 0, configured: 0, pruned: 0, failed: 0 },
      },
    });
    assert.deepEqual(
      runs.map((r) => [r.name, r.head_sha, r.status, r.conclusion]),
      [["syncward / pr-7-dev", b, "completed", "success"]],
    );
    assert.deepEqual(takeOpenApiViolations(), []);
  });
});
