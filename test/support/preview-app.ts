// The app with preview environments on, for end-to-end tests of previews: GitHub answers as
// answerEverything() does (every request checked against GitHub's OpenAPI description), pull
// requests are what the test says they are (`pulls`), the repository's heads are a real git
// repository's, and every pusher is a writer. The operator's project `shop` allows previews in
// `<prefix>-pr-*`; the repository's dev environment deploys `app/` and its template copies it.
import { execFileSync } from "node:child_process";
import { stringify } from "yaml";
import type { KubeClient } from "../../src/kube/client.ts";
import type { ClusterResolver } from "../../src/reconciler/reconciler.ts";
import { REPO_PATH, startApp, type TestApp } from "./app.ts";
import { eventually, type TestCluster } from "./cluster.ts";
import type { TestRepo } from "./git-repo.ts";
import { answerEverything, configFile } from "./permissive-github.ts";
import { configMap } from "./projects.ts";
import { optionalRules } from "./syncward-account.ts";
import { pullRequestEvent, repoIdOf } from "./webhooks.ts";
import { within } from "./within.ts";

// What syncward needs for previews beyond deploy/'s defaults: the opt-in component's grants.
export const previewRules = optionalRules("previews.yaml", "previews");
export const stateRules = [
  {
    apiGroups: [""],
    resources: ["configmaps"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
  {
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
];

/**
 * Until `check` stops throwing, within `timeoutMs`. Each look is bounded too: a look that waits on
 * previews.idle() while a teardown never ends fails here, saying so, instead of hanging the test.
 */
export const until = (what: string, check: () => Promise<void>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  return eventually(
    what,
    async () => {
      const left = Math.max(deadline - Date.now(), 0);
      await within(left, "a look (it waits for the previews' work to finish)", check());
      return true;
    },
    timeoutMs,
  );
};

export interface Pull {
  state: "open" | "closed";
  head: string;
  branch: string;
  fork?: boolean;
  /** The branch it merges into (default main): a writer can move it (an `edited` webhook). */
  base?: string;
}

export interface PreviewAppOptions {
  cluster: TestCluster;
  repo: TestRepo;
  pulls: Map<number, Pull>;
  /** Namespaces are `<prefix>-dev` and `<prefix>-pr-<number>`. */
  prefix: string;
  stateNamespace: string;
  /** The app's own client (default: deploy/'s account with the previews component, cluster-wide). */
  client?: KubeClient;
  /** Resolves named destination clusters (default: none; every environment is on `client`'s). */
  clusters?: ClusterResolver;
  /** The cluster the dev environment (so its previews) deploys to, by name. */
  destinationCluster?: string;
  /** Added to the operator's `previews:` of project shop (e.g. maxPerRepository). */
  limits?: Record<string, unknown>;
  /** How often the sweep runs (ms; default 300, so a test sees it soon). */
  sweepMs?: number;
  /** Watches on, as in production (tests leave them off: their passes come from events). */
  watch?: boolean;
  /**
   * One of several replicas by this name: Leases, watches and the shard on, started as in
   * production. A second app shares the first one's GitHub (nock is global: the first one's
   * answers and records every request), so only the last app's close may forget the mock.
   */
  identity?: string;
  /** Added to the repository's preview template (e.g. ttl). */
  template?: Record<string, unknown>;
  /** How often the app polls its environments' branches (ms, or "config"; default 0: never, as startApp). */
  pollIntervalMs?: number | "config";
  /** Logins whose permission on the repository is read (everyone else is a writer). */
  readers?: string[];
  /**
   * Pushes to the test's branches beyond each pull request's head pushed by octocat, as GitHub's
   * activity of the branch lists them (the newest last).
   */
  pushes?: Array<{ branch: string; after: string; login: string }>;
  /** Registers interceptors that answer before the app's usual GitHub (e.g. a failure). */
  before?: (app: TestApp) => void;
}

export interface PreviewApp extends TestApp {
  /** The namespace exists, or the ConfigMap `name` in it does. */
  exists(ns: string, name?: string): Promise<boolean>;
  /** The bodies of the requests the app sent to GitHub with this method and path. */
  sent(method: string, path: RegExp): Array<Record<string, unknown>>;
  /** The check runs named `name`, in the order they were created, each as its last update left it. */
  checkRuns(name: string): CheckRun[];
  /** The bodies of the comments the app wrote on pull request `n`, then of its preview comment's edits. */
  comments(n: number): Array<Record<string, unknown>>;
  /** Stops the previews and the repository's runtimes, and forgets the GitHub mock (once). */
  close(): Promise<void>;
}

export interface CheckRun {
  id: number;
  name: string;
  head_sha: string;
  status?: string;
  conclusion?: string;
  output?: { title?: string; summary?: string };
}

/**
 * Check runs as GitHub keeps them: created, then changed by each update to their id. Registered
 * before answerEverything() so these answer (GitHub's ids are what tie an update to its run).
 */
function recordCheckRuns(app: TestApp): CheckRun[] {
  const runs: CheckRun[] = [];
  const api = app.mock.api.persist();
  api.post(`${REPO_PATH}/check-runs`).reply(201, (_uri, body) => {
    const run = { ...(body as Omit<CheckRun, "id">), id: 70_000 + runs.length };
    runs.push(run);
    return { id: run.id, html_url: `https://github.com/acme/shop/runs/${run.id}` };
  });
  api.patch(/\/check-runs\/\d+$/).reply((uri, body) => {
    const run = runs.find((r) => r.id === Number(uri.split("/").at(-1)));
    if (!run) return [404, { message: "Not Found" }];
    Object.assign(run, body);
    return [200, { id: run.id, html_url: `https://github.com/acme/shop/runs/${run.id}` }];
  });
  return runs;
}

/**
 * The config file as GitHub serves it at a ref: the test repository's at that commit or branch
 * when it has one (a pull request that edits it), else `config` (the default branch's, which the
 * test repository does not commit). Registered before answerEverything() so this one answers.
 */
function configAtRefs(app: TestApp, config: string, repo: TestRepo): void {
  app.mock.api
    .persist()
    .get(/\/contents\/\.github(%2F|\/)syncward\.yml/)
    .query(true)
    .reply(200, (uri) => {
      const ref = new URL(uri, "https://api.github.com").searchParams.get("ref");
      let text = config;
      try {
        if (ref)
          text = execFileSync("git", ["show", `${ref}:.github/syncward.yml`], {
            cwd: repo.dir,
            stdio: ["ignore", "pipe", "ignore"],
          }).toString();
      } catch {
        // not committed at that ref: the default branch's
      }
      return configFile(text);
    });
}

export async function startPreviewApp(o: PreviewAppOptions): Promise<PreviewApp> {
  const { cluster, repo, pulls, prefix } = o;
  const client = o.client ?? cluster.syncwardClientWith([...previewRules, ...stateRules]).client;
  const cluster_ = o.destinationCluster === undefined ? {} : { cluster: o.destinationCluster };
  const app = await startApp({
    client,
    clusters: o.clusters,
    pollIntervalMs: o.pollIntervalMs,
    stateNamespace: o.stateNamespace,
    ...(o.watch || o.identity ? { replica: { identity: o.identity ?? "previews", watch: true } } : {}),
    // A replica starts its shard and its previews itself, as the app in production does.
    ...(o.identity ? { autoStart: true } : {}),
    previewSweepMs: o.sweepMs ?? 300,
    previewTeardownRetryMs: { initial: 200, max: 1000 },
    projects: stringify({
      projects: [
        {
          name: "shop",
          repositories: ["acme/shop"],
          destinations: [{ namespace: `${prefix}-*`, ...cluster_ }],
          previews: {
            allowed: true,
            destinations: [{ namespace: `${prefix}-pr-*`, ...cluster_ }],
            resourceQuota: { hard: { pods: "5" } },
            ...o.limits,
          },
        },
      ],
    }),
  });
  const config = stringify({
    environments: [
      { name: "dev", source: { path: "app" }, destination: { namespace: `${prefix}-dev`, ...cluster_ } },
    ],
    previewEnvironments: [
      {
        from: "dev",
        namespace: `${prefix}-pr-{number}`,
        url: "https://pr-{number}.preview.example",
        ...o.template,
      },
    ],
  });
  o.before?.(app);
  const runs = recordCheckRuns(app);
  configAtRefs(app, config, repo);
  for (const login of o.readers ?? [])
    app.mock.api
      .persist()
      .get(`${REPO_PATH}/collaborators/${login}/permission`)
      .reply(200, { permission: "read", role_name: "read", user: { login } });
  answerEverything(app.mock, config, repo.dir);
  const api = app.mock.api.persist();
  api.get(REPO_PATH).reply(200, () => ({
    id: repoIdOf("acme/shop"),
    name: "shop",
    full_name: "acme/shop",
    html_url: "https://github.com/acme/shop",
    default_branch: "main",
  }));
  // The branch heads are the test repository's.
  api.get(/\/branches\/[^/]+$/).reply(200, (uri) => {
    const branch = decodeURIComponent(uri.split("/branches/")[1] ?? "");
    return { name: branch, commit: { sha: repo.git("rev-parse", branch).trim() } };
  });
  api.get(/\/pulls\/\d+$/).reply((uri) => {
    const number = Number(uri.split("/").at(-1));
    const pr = pulls.get(number);
    if (!pr) return [404, { message: "Not Found" }];
    const id = repoIdOf("acme/shop");
    return [
      200,
      {
        number,
        state: pr.state,
        merged: false,
        mergeable: true,
        merge_commit_sha: pr.head,
        user: { login: "octocat" },
        labels: [{ name: "preview" }],
        head: { sha: pr.head, ref: pr.branch, repo: { id: pr.fork ? id + 1 : id } },
        base: { ref: pr.base ?? "main", repo: { id } },
      },
    ];
  });
  // A head's commits that are not on a base (the compare API, by pages of `per_page`) are the test
  // repository's, each written by octocat (a writer, as the permission API says of every login but
  // `readers`): only the branch's activity tells who pushed them.
  api
    .get(/\/compare\/[^/]+\.\.\.[^/?]+$/)
    .query(true)
    .reply(200, (uri) => {
      const url = new URL(uri, "https://api.github.com");
      const [base = "", head = ""] = decodeURIComponent(url.pathname.split("/compare/")[1] ?? "").split(
        "...",
      );
      const list = (range: string) => repo.git("rev-list", "--reverse", range).split("\n").filter(Boolean);
      const ahead = list(`${base}..${head}`);
      const behind = list(`${head}..${base}`).length;
      const perPage = Number(url.searchParams.get("per_page") ?? 250);
      const page = Number(url.searchParams.get("page") ?? 1);
      return {
        status:
          ahead.length === 0 ? (behind === 0 ? "identical" : "behind") : behind === 0 ? "ahead" : "diverged",
        ahead_by: ahead.length,
        behind_by: behind,
        total_commits: ahead.length,
        commits: ahead.slice((page - 1) * perPage, page * perPage).map((sha) => ({
          sha,
          author: { login: "octocat" },
          committer: { login: "web-flow" },
        })),
      };
    });
  // A pull request's own list of commits, as GitHub computes it: those of its head not on its base
  // (which a writer can move), the oldest 250. syncward must not rely on it; it answers here so a
  // regression to it is seen doing what GitHub would make it do.
  api
    .get(/\/pulls\/\d+\/commits/)
    .query(true)
    .reply(200, (uri) => {
      const pr = pulls.get(Number(uri.split("/")[5]));
      const shas = pr ? repo.git("rev-list", "--reverse", `${pr.base ?? "main"}..${pr.head}`) : "";
      return shas
        .split("\n")
        .filter(Boolean)
        .slice(0, 250)
        .map((sha) => ({ sha, author: { login: "octocat" }, committer: { login: "web-flow" } }));
    });
  // GitHub's activity of a branch: octocat pushed each pull request's head, and `pushes` more.
  api
    .get(`${REPO_PATH}/activity`)
    .query(true)
    .reply(200, (uri) => {
      const ref = new URL(uri, "https://api.github.com").searchParams.get("ref") ?? "";
      const branch = ref.replace(/^refs\/heads\//, "");
      const heads = [...pulls.values()]
        .filter((p) => p.branch === branch)
        .map((p) => ({ branch, after: p.head, login: "octocat" }));
      return [...heads, ...(o.pushes ?? []).filter((p) => p.branch === branch)].reverse().map((p, i) => ({
        id: 5000 + i,
        node_id: `A_${i}`,
        before: "0".repeat(40),
        after: p.after,
        ref: `refs/heads/${branch}`,
        timestamp: "2024-05-01T12:00:00Z",
        activity_type: "push",
        actor: { login: p.login, id: 1, type: "User" },
      }));
    });
  if (!o.identity) app.parts.previews.start();

  let closed = false;
  const sent = (method: string, path: RegExp) =>
    app.mock.requests
      .filter((r) => r.method === method && path.test(r.url))
      .map((r) => r.body as Record<string, unknown>);
  return {
    ...app,
    async exists(ns, name) {
      return name === undefined
        ? (await cluster.client.get("v1", "Namespace", undefined, ns)) !== undefined
        : (await cluster.client.get("v1", "ConfigMap", ns, name)) !== undefined;
    },
    sent,
    checkRuns: (name) => runs.filter((r) => r.name === name),
    comments: (n) => [
      ...sent("POST", new RegExp(`/issues/${n}/comments$`)),
      // An edit names its preview in the comment's marker.
      ...sent("PATCH", /\/issues\/comments\/\d+$/).filter((b) => String(b.body).includes(`#${n}:`)),
    ],
    async close() {
      if (closed) return;
      closed = true;
      try {
        // A teardown under way sees the stop at its next attempt; its requests end before the
        // mock's. One that never sees it fails the test here.
        const stopped = app.parts.previews.stop().then(() => app.parts.previews.idle());
        await within(30_000, "the previews' stop (a teardown or report that ignores it)", stopped);
        // The shard too (a replica's): its renewals and Lease watch would keep the process alive.
        await app.parts.runtimes.stop();
      } finally {
        app.mock.reset();
      }
    },
  };
}

/**
 * Pull request `n` from its own branch with one ConfigMap of its own (`c<n>`) and `files`,
 * labelled `preview`.
 */
export async function labelPull(
  app: TestApp,
  repo: TestRepo,
  pulls: Map<number, Pull>,
  n: number,
  files: Record<string, string> = {},
): Promise<string> {
  repo.git("checkout", "-q", "-b", `feature-${n}`, "main");
  const head = repo.commit({ [`app/c${n}.yaml`]: configMap(`c${n}`), ...files }, `add c${n}`);
  repo.git("checkout", "-q", "main");
  pulls.set(n, { state: "open", head, branch: `feature-${n}` });
  await app.probot.receive(
    pullRequestEvent("labeled", { number: n, headSha: head, headRef: `feature-${n}`, labels: ["preview"] }),
  );
  return head;
}

/** Pull request `n` closes (unmerged): GitHub says so, and the app hears the webhook. */
export async function closePull(app: TestApp, pulls: Map<number, Pull>, n: number): Promise<void> {
  const pr = pulls.get(n) as Pull;
  pulls.set(n, { ...pr, state: "closed" });
  await app.probot.receive(
    pullRequestEvent("closed", {
      number: n,
      headSha: pr.head,
      headRef: pr.branch,
      merged: false,
      labels: ["preview"],
    }),
  );
}
