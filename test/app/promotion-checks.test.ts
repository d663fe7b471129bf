// promotion.checks: a commit its upstream has proven is promoted only once the named checks passed
// on it, as GitHub's check runs and commit statuses say (the requireChecks adapter, same meaning);
// until then the downstream holds and says which check it waits for. A check suite completing on
// the branch wakes the downstream, so the promotion follows the check, not a poll.
// GitHub is nock; every request is validated against GitHub's OpenAPI description. The upstream's
// evidence is its state, as the state store keeps it.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { parseConfig } from "../../src/config/load.ts";
import type { EnvironmentConfig, PromotionRule } from "../../src/config/types.ts";
import { onCheckSuiteCompleted } from "../../src/github/checks-completed.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { GitHubRequiredChecks } from "../../src/github/required-checks.ts";
import type { Runtimes } from "../../src/github/runtime.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { Promotion } from "../../src/reconciler/promotion/promotion.ts";
import { instanceName } from "../../src/state/identity.ts";
import { defaultState, type StateStore } from "../../src/state/store.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { createTestProbot, type GitHubMock, mockGitHub } from "../support/github.ts";
import { mockCommitChecks } from "../support/github-checks.ts";
import { checkSuiteCompletedEvent } from "../support/webhooks.ts";

const SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const APP = "shop";
const ACTIONS = 15368;

const config = parseConfig(`environments:
  - name: staging
    source: {path: overlays/staging}
    destination: {namespace: shop-staging}
    syncPolicy: {automated: {prune: true}}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    syncPolicy: {automated: {prune: true}}
    promotion: {after: staging, healthyFor: 10m, checks: [e2e]}
`);
const prod = config.environments[1] as EnvironmentConfig & { promotion: PromotionRule };

let gh: GitHubMock | undefined;
afterEach(() => gh?.reset());

/** staging has run SHA Healthy for an hour: proven, as far as its health goes. */
function states(): Record<string, EnvironmentState> {
  const since = new Date(Date.now() - 3_600_000).toISOString();
  return {
    [instanceName(APP, "staging")]: {
      ...defaultState(instanceName(APP, "staging")),
      lastSyncedRevision: SHA,
      health: "Healthy",
      healthRecords: [{ revision: SHA, since }],
    },
    [instanceName(APP, "prod")]: defaultState(instanceName(APP, "prod")),
  };
}

async function promotion(): Promise<Promotion> {
  const probot = await createTestProbot();
  const octokit = (await probot.auth(4242)) as unknown as Octokit;
  const known = states();
  const store = { namespace: "syncward", load: async (instance: string) => known[instance] };
  return new Promotion({
    app: APP,
    env: prod,
    links: { upstreams: [{ name: "staging", branch: "main" }] },
    store: store as unknown as StateStore,
    // Only start() watches the states; these looks read them through the store.
    stateClient: {} as KubeClient,
    checks: new GitHubRequiredChecks(async () => octokit, { owner: "acme", repo: "shop" }),
    wake: () => undefined,
    emit: () => undefined,
  });
}

/** The check runs on SHA: e2e as given, and a lint run that passed. */
function mockRuns(mock: GitHubMock, e2e: { status: string; conclusion: string | null }) {
  const runs = [
    { id: 1, name: "lint", status: "completed", conclusion: "success" },
    { id: 2, name: "e2e", ...e2e },
  ].map((r) => ({
    ...r,
    head_sha: SHA,
    app: { id: ACTIONS, slug: "github-actions" },
    check_suite: { id: 1000 + r.id },
  }));
  mockCommitChecks(mock, SHA, runs, []);
}

describe("promotion.checks", () => {
  it("a proven commit whose e2e is still running is not promoted, and says so", async () => {
    gh = mockGitHub();
    mockRuns(gh, { status: "in_progress", conclusion: null });
    const target = await (await promotion()).target(SHA);
    gh.assertDone();
    assert.equal(target.revision, undefined, "prod holds");
    assert.match(target.waiting ?? "", /^a1b2c3d is proven, but checks have not passed on it: e2e/);
  });

  it("a failed e2e holds it too", async () => {
    gh = mockGitHub();
    mockRuns(gh, { status: "completed", conclusion: "failure" });
    const target = await (await promotion()).target(SHA);
    gh.assertDone();
    assert.equal(target.revision, undefined);
    assert.match(target.waiting ?? "", /checks have not passed on it: e2e/);
  });

  it("once e2e passed, the commit is promoted with the check in its evidence", async () => {
    gh = mockGitHub();
    mockRuns(gh, { status: "completed", conclusion: "success" });
    const target = await (await promotion()).target(SHA);
    gh.assertDone();
    assert.equal(target.revision, SHA);
    assert.deepEqual(target.note?.from, ["staging"]);
    assert.deepEqual(target.note?.evidence, ["staging: Healthy for 1h at this commit", "e2e passed"]);
  });

  it("a check suite completing on the branch wakes the promoted environment (it requires no checks itself)", async () => {
    const woken: string[] = [];
    const controllers = config.environments.map((env) => ({
      env,
      instance: instanceName(APP, env.name),
      rules: async () => env,
    }));
    const rt = {
      reconciler: {
        environments: controllers,
        store: { load: async () => defaultState("any") },
        wake: (name: string) => woken.push(name),
      },
    };
    const runtimes = { running: () => rt } as unknown as Runtimes;
    const got = await onCheckSuiteCompleted(
      runtimes,
      checkSuiteCompletedEvent({ headSha: SHA, branch: "main" }).payload as never,
      async () => ({ id: 1, slug: "syncward" }),
    );
    assert.deepEqual(got, ["prod"]);
    assert.deepEqual(woken, ["prod"]);
  });
});
