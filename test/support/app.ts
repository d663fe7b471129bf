// The syncward GitHub App under test: Probot with the strict GitHub mock (every request checked
// against GitHub's OpenAPI description), and either the real local cluster or none at all.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Probot } from "probot";
import { bootstrap, type SyncwardApp, syncwardApp } from "../../src/github/app.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { Runtimes } from "../../src/github/runtime.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { AppStatusFollower } from "../../src/observability/app-status-follower.ts";
import { parseProjects } from "../../src/projects/load.ts";
import type { ClusterResolver } from "../../src/reconciler/reconciler.ts";
import { createTestProbot, type GitHubMock, mockGitHub } from "./github.ts";
import { unreachableKubeconfig } from "./kubeconfig.ts";
import { DEFAULT_INSTALLATION_ID, DEFAULT_OWNER, DEFAULT_REPO, listedRepository } from "./webhooks.ts";

export const REPO_PATH = `/repos/${DEFAULT_OWNER}/${DEFAULT_REPO}`;

/** A client whose server is never there: for tests that must not reach a cluster. */
export function unreachableClient(): KubeClient {
  return KubeClient.fromKubeconfig({ kubeconfig: unreachableKubeconfig(), timeoutMs: 2000 });
}

/**
 * The app's repository runtimes with no cluster, no leases or watches and nothing started: for
 * tests of what the app decides from GitHub alone (its calls go to the strict GitHub mock), as
 * `given` (or a new test Probot) authenticates.
 */
export async function offlineRuntimes(given?: Probot): Promise<Runtimes> {
  const probot = given ?? (await createTestProbot());
  return new Runtimes({
    client: unreachableClient(),
    stateNamespace: "x",
    cacheDir: "/tmp",
    identity: "t",
    leases: false,
    watch: false,
    autoStart: false,
    log: pino({ level: "silent" }),
    auth: async () => (await probot.auth()) as unknown as Octokit,
  });
}

export interface TestApp {
  probot: Probot;
  mock: GitHubMock;
  parts: SyncwardApp;
  /** Waits until every reconciler pass and every report to GitHub has finished. */
  settle(): Promise<void>;
}

export async function startApp(options: {
  client: KubeClient;
  /** Named destination clusters (absent: every environment on `client`'s cluster). */
  clusters?: ClusterResolver;
  stateNamespace?: string;
  autoStart?: boolean;
  /** Octokit retries and rate-limit handling on, as in production (waits shortened). */
  resilient?: boolean;
  reportRetryMs?: { initial: number; max: number };
  /** The operator's projects document (YAML, as in the ConfigMap syncward-projects); absent: none. */
  projects?: string;
  /** One of several replicas: app Leases on, shared out among the replicas by this identity. */
  replica?: { identity: string; watch?: boolean };
  /**
   * How often environments poll their branches (ms; default 0: never, passes come from events);
   * "config": each environment's own `pollInterval` (3m by default), as in production.
   */
  pollIntervalMs?: number | "config";
  /** Preview environments: the sweep's interval and the teardown's retries (ms). */
  previewSweepMs?: number;
  previewTeardownRetryMs?: { initial: number; max: number };
  /** The state-backed gauges (`syncward_app_info`, `syncward_environment_pinned`), as production wires them. */
  appStatus?: AppStatusFollower;
}): Promise<TestApp> {
  const mock = mockGitHub();
  let parts: SyncwardApp | undefined;
  const probot = await createTestProbot(
    syncwardApp(
      {
        client: options.client,
        clusters: options.clusters,
        stateNamespace: options.stateNamespace ?? "syncward-test",
        cacheDir: mkdtempSync(join(tmpdir(), "syncward-gh-trees-")),
        identity: options.replica?.identity ?? "test",
        leases: options.replica !== undefined,
        watch: options.replica?.watch ?? false,
        pollIntervalMs: options.pollIntervalMs === "config" ? undefined : (options.pollIntervalMs ?? 0),
        autoStart: options.autoStart ?? false,
        reportRetryMs: options.reportRetryMs,
        previewSweepMs: options.previewSweepMs,
        previewTeardownRetryMs: options.previewTeardownRetryMs,
        appStatus: options.appStatus,
        ...(options.projects === undefined
          ? {}
          : { projects: async () => parseProjects(options.projects as string, "projects.yaml") }),
        log: pino({ level: process.env.SYNCWARD_TEST_LOG ?? "silent" }),
      },
      (p) => {
        parts = p;
      },
    ),
    { resilient: options.resilient },
  );
  if (!parts) throw new Error("the app did not start");
  const ready = parts;
  return {
    probot,
    mock,
    parts: ready,
    async settle() {
      for (let i = 0; i < 3; i++) {
        for (const rt of ready.runtimes.all()) {
          await Promise.all(rt.reconciler.environments.map((c) => c.idle()));
          await rt.reporter.idle();
        }
      }
    },
  };
}

/** GitHub answers the default branch's `.github/syncward.yml` with `yaml`. */
export function mockConfig(mock: GitHubMock, yaml: string, times = 1): void {
  mock.api
    .get(/\/repos\/acme\/shop\/contents\/\.github(%2F|\/)syncward\.yml/)
    .query(true)
    .times(times)
    .reply(200, {
      type: "file",
      encoding: "base64",
      name: "syncward.yml",
      path: ".github/syncward.yml",
      content: Buffer.from(yaml).toString("base64"),
      sha: "0".repeat(40),
      size: yaml.length,
    });
}

/** The collaborator permission API answers `permission` for `login` (404 for "none": not a collaborator). */
export function mockPermission(
  mock: GitHubMock,
  login: string,
  permission: "admin" | "maintain" | "write" | "triage" | "read" | "none",
): void {
  const scope = mock.api.get(`${REPO_PATH}/collaborators/${login}/permission`);
  // Whether they are a collaborator at all (asked only of listed approvers): not required.
  mock.api
    .get(`${REPO_PATH}/collaborators/${login}`)
    .optionally()
    .reply(permission === "none" ? 404 : 204);
  if (permission === "none") scope.reply(404, { message: "Not Found" });
  else {
    const base = permission === "maintain" ? "write" : permission === "triage" ? "read" : permission;
    scope.reply(200, { permission: base, role_name: permission, user: { login } });
  }
}

/** Reactions on a comment: eyes at once, then `outcome`. Returns the bodies of replies, via `replies`. */
export function mockReactions(mock: GitHubMock, commentId: number, outcome: "rocket" | "confused"): void {
  mock.api
    .post(`${REPO_PATH}/issues/comments/${commentId}/reactions`, { content: "eyes" })
    .reply(201, { id: 1, content: "eyes" });
  mock.api
    .post(`${REPO_PATH}/issues/comments/${commentId}/reactions`, { content: outcome })
    .reply(201, { id: 2, content: outcome });
}

/** Captures the body of the next reply on pull request `number`. */
export function mockReply(mock: GitHubMock, number: number): { body: () => string } {
  let body = "";
  mock.api
    .post(`${REPO_PATH}/issues/${number}/comments`, (b: { body: string }) => {
      body = b.body;
      return true;
    })
    .reply(201, { id: 555, body: "" });
  return { body: () => body };
}

/**
 * GitHub holds no earlier syncward deployment of `env`: after it starts, the reporter looks once
 * per environment before making one (so a restart never makes a second).
 */
export function mockNoEarlierDeployments(mock: GitHubMock, env: string): void {
  mock.api
    .get(`${REPO_PATH}/deployments`)
    .query((q) => q.environment === env)
    .reply(200, []);
}

/**
 * GitHub's answer to reading pull request `number`: its head, and GitHub's test merge commit while
 * it merges cleanly (`mergeable: null` while GitHub is still computing it). `fork` puts the head
 * in another repository.
 */
export function mockPull(
  mock: GitHubMock,
  number: number,
  o: { head: string; mergeCommit?: string; mergeable?: boolean | null; fork?: boolean; base?: string },
  times = 1,
): void {
  const mergeable = o.mergeable === undefined ? o.mergeCommit !== undefined : o.mergeable;
  mock.api
    .get(`${REPO_PATH}/pulls/${number}`)
    .times(times)
    .reply(200, {
      number,
      state: "open",
      mergeable,
      merge_commit_sha: mergeable ? (o.mergeCommit ?? null) : null,
      head: { sha: o.head, ref: `feature-${number}`, repo: { id: o.fork ? 4242 : 1296269 } },
      base: { ref: o.base ?? "main", repo: { id: 1296269 } },
    });
}

/** GitHub's list of the files pull request `number` changes (the config check reads it). */
export function mockPullFiles(mock: GitHubMock, number: number, files: string[]): void {
  mock.api
    .get(`${REPO_PATH}/pulls/${number}/files`)
    .query(true)
    .reply(
      200,
      files.map((filename) => ({ filename, status: "modified" })),
    );
}

/**
 * Starts `app` as a restarted pod does: bootstrap over the installations' repositories (GitHub
 * lists the test repository, under the id its webhooks carry: the same app after the restart).
 * Returns the repositories started.
 */
export async function bootstrapAsRestarted(app: TestApp): Promise<string[]> {
  app.mock.api
    .get("/app/installations")
    .query(true)
    .reply(200, [{ id: DEFAULT_INSTALLATION_ID, account: { login: DEFAULT_OWNER } }]);
  app.mock.api
    .get("/installation/repositories")
    .query(true)
    .reply(200, { total_count: 1, repositories: [listedRepository()] });
  const probot = app.probot;
  return bootstrap(probot, app.parts.runtimes, async (id) => (await probot.auth(id)) as unknown as Octokit);
}
