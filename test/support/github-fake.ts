// A small stateful GitHub behind the strict nock mock, for tests that run long enough that the
// number and order of requests depend on timing (outages, bursts, restarts). It serves one
// repository (config, branch head, tarballs from a real git repository), records the reports
// syncward sends (check runs, deployments and their statuses, comments), remembers deployments
// across app instances (GitHub keeps them when syncward restarts), and can be taken down: while
// `outage` is set, report endpoints answer 502 and 503 in turn. Every request is still validated
// against GitHub's OpenAPI description by the Octokit the app uses.
import { execFileSync } from "node:child_process";
import type { TestRepo } from "./git-repo.ts";
import { GITHUB_API, type GitHubMock } from "./github.ts";
import { DEFAULT_BRANCH, DEFAULT_OWNER, DEFAULT_REPO, repoIdOf, userIdOf } from "./webhooks.ts";

const REPO = `/repos/${DEFAULT_OWNER}/${DEFAULT_REPO}`;
const CODELOAD = "https://codeload.github.com";
const HTML = `https://github.com/${DEFAULT_OWNER}/${DEFAULT_REPO}`;

export interface FakeCheck {
  id: number;
  name: string;
  head_sha: string;
  conclusion?: string;
  output?: { title: string; summary: string };
}
export interface FakeDeployment {
  id: number;
  ref: string;
  environment: string;
  payload: unknown;
}
export interface FakeStatus {
  deployment: number;
  state: string;
  description?: string;
}

export type Reply = [number, unknown] | [number, unknown, Record<string, string>];

function parsed<T>(body: unknown): T {
  return (typeof body === "string" && body !== "" ? JSON.parse(body) : body) as T;
}

export class FakeGitHub {
  /** While true, report endpoints fail with 502/503. */
  outage = false;
  /** While true, tarball downloads fail with 502/503. */
  sourceOutage = false;
  /** Requests refused (outages and canned failures). */
  refused = 0;
  /** Answers given, in order, to the next report requests instead of accepting them. */
  readonly failNext: Reply[] = [];
  readonly checks: FakeCheck[] = [];
  readonly deployments: FakeDeployment[] = [];
  readonly statuses: FakeStatus[] = [];
  readonly comments: Array<{ issue: number; body: string }> = [];
  /** Deployment look-ups (GET /deployments) answered. */
  lookups = 0;
  private nextId = 1000;

  constructor(
    private readonly repo: TestRepo,
    /** The config on the default branch (a test changes it to push a new one). */
    public config: string,
  ) {}

  /** Commits of the repository as the compare API lists them (`git log` arguments). */
  private commits(spec: string) {
    const out = this.repo.git("log", "--reverse", "--format=%H%x09%ae%x09%ce%x09%s", ...spec.split(" "));
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [sha, author, committer, message] = line.split("\t") as [string, string, string, string];
        return {
          sha,
          commit: { message, author: { email: author }, committer: { email: committer } },
          author: null,
          committer: null,
        };
      });
  }

  /** GitHub's compare status of `base...head`, from the real repository's history. */
  private compared(base: string, head: string): "identical" | "ahead" | "behind" | "diverged" {
    if (base === head) return "identical";
    const within = (a: string, b: string) => {
      try {
        this.repo.git("merge-base", "--is-ancestor", a, b);
        return true;
      } catch {
        return false;
      }
    };
    return within(base, head) ? "ahead" : within(head, base) ? "behind" : "diverged";
  }

  /** Who pushes to the repository, as GitHub's repository activity names them. */
  pusher = { login: "alice", id: userIdOf("alice"), type: "User" };

  private activity(ref: string) {
    const log = this.repo.git("log", "--first-parent", "--format=%H %P", ref).split("\n").filter(Boolean);
    return log.map((line, i) => {
      const [after, before] = line.split(" ") as [string, string | undefined];
      return {
        id: i + 1,
        node_id: `A_${i}`,
        before: before ?? "0".repeat(40),
        after,
        ref,
        timestamp: "2024-05-01T12:00:00Z",
        activity_type: "push",
        actor: this.pusher,
      };
    });
  }

  /** Answers on `mock` (again after a new mock: what GitHub holds is kept). */
  install(mock: GitHubMock): void {
    const api = mock.scope(GITHUB_API).persist();
    // The repository itself: its id (what a start without one reads, state/identity.ts).
    api
      .get(`/repos/${DEFAULT_OWNER}/${DEFAULT_REPO}`)
      .optionally()
      .reply(200, () => ({
        id: repoIdOf(`${DEFAULT_OWNER}/${DEFAULT_REPO}`),
        name: DEFAULT_REPO,
        full_name: `${DEFAULT_OWNER}/${DEFAULT_REPO}`,
        owner: { login: DEFAULT_OWNER },
        default_branch: DEFAULT_BRANCH,
        html_url: `https://github.com/${DEFAULT_OWNER}/${DEFAULT_REPO}`,
      }));
    api
      .get(/\/repos\/acme\/shop\/contents\/\.github(%2F|\/)syncward\.yml/)
      .query(true)
      .optionally()
      .reply(200, () => ({
        type: "file",
        encoding: "base64",
        name: "syncward.yml",
        path: ".github/syncward.yml",
        content: Buffer.from(this.config).toString("base64"),
        sha: "0".repeat(40),
        size: this.config.length,
      }));
    api
      .get(/\/repos\/acme\/shop\/branches\/[^/]+$/)
      .optionally()
      .reply((uri) => {
        const branch = decodeURIComponent(uri.split("/").at(-1)!);
        return [200, { name: branch, commit: { sha: this.repo.git("rev-parse", `refs/heads/${branch}`) } }];
      });
    api
      .get(/\/repos\/acme\/shop\/tarball\/[0-9a-f]{40}$/)
      .optionally()
      .reply((uri) => {
        if (this.sourceOutage) return this.refuse();
        const sha = uri.split("/").at(-1)!;
        return [302, "", { location: `${CODELOAD}/acme/shop/legacy.tar.gz/${sha}` }];
      });
    // What an approval would deploy, from the real repository: its commits are by an address no
    // GitHub account claims, and no pull request carries them.
    api
      .get(/\/repos\/acme\/shop\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}/)
      .query(true)
      .optionally()
      .reply((uri) => {
        const [base, head] = uri.split("?")[0]!.split("/").at(-1)!.split("...") as [string, string];
        const commits = this.commits(`${base}..${head}`);
        return [200, { status: this.compared(base, head), total_commits: commits.length, commits }];
      });
    api
      .get(`${REPO}/commits`)
      .query(true)
      .optionally()
      .reply((uri) => [200, this.commits(`-1 ${new URL(uri, GITHUB_API).searchParams.get("sha")}`)]);
    // Who moved a branch: its history in the real repository, each commit a push by `pusher`.
    api
      .get(`${REPO}/activity`)
      .query(true)
      .optionally()
      .reply((uri) => [200, this.activity(new URL(uri, GITHUB_API).searchParams.get("ref") ?? "")]);
    api
      .get(/\/repos\/acme\/shop\/commits\/[0-9a-f]{40}\/pulls/)
      .query(true)
      .optionally()
      .reply(200, []);
    mock
      .scope(CODELOAD)
      .persist()
      .get(/\/acme\/shop\/legacy\.tar\.gz\/[0-9a-f]{40}$/)
      .optionally()
      .reply(
        200,
        (uri) => {
          const sha = uri.split("/").at(-1)!;
          return execFileSync(
            "git",
            ["archive", "--format=tar.gz", `--prefix=acme-shop-${sha.slice(0, 7)}/`, sha],
            { cwd: this.repo.dir },
          );
        },
        { "content-type": "application/x-gzip" },
      );

    api
      .post(`${REPO}/check-runs`)
      .optionally()
      .reply((_uri, body) =>
        this.report(() => {
          const check = { ...parsed<Omit<FakeCheck, "id">>(body), id: this.nextId++ };
          this.checks.push(check);
          return [201, { id: check.id, name: check.name, html_url: `${HTML}/runs/${check.id}` }];
        }),
      );
    // An update (a sync's run completed, a waiting run's new state) changes the run in place.
    api
      .patch(/\/check-runs\/\d+$/)
      .optionally()
      .reply((uri, body) =>
        this.report(() => {
          const id = Number(uri.split("/").at(-1));
          const check = this.checks.find((c) => c.id === id);
          if (!check) return [404, { message: "Not Found" }];
          Object.assign(check, parsed<Partial<FakeCheck>>(body));
          return [200, { id, name: check.name, html_url: `${HTML}/runs/${id}` }];
        }),
      );
    api
      .get(`${REPO}/deployments`)
      .optionally()
      .query(true)
      .reply((uri) =>
        this.report(() => {
          this.lookups++;
          const q = new URL(uri, GITHUB_API).searchParams;
          const found = this.deployments.filter(
            (d) =>
              (!q.has("sha") || d.ref === q.get("sha")) &&
              (!q.has("environment") || d.environment === q.get("environment")),
          );
          return [200, found];
        }),
      );
    api
      .post(`${REPO}/deployments`)
      .optionally()
      .reply((_uri, body) =>
        this.report(() => {
          const b = parsed<Omit<FakeDeployment, "id">>(body);
          const d = { id: this.nextId++, ref: b.ref, environment: b.environment, payload: b.payload };
          this.deployments.push(d);
          return [201, d];
        }),
      );
    api
      .post(/\/repos\/acme\/shop\/deployments\/\d+\/statuses$/)
      .optionally()
      .reply((uri, body) =>
        this.report(() => {
          const deployment = Number(uri.split("/").at(-2));
          this.statuses.push({ deployment, ...parsed<Omit<FakeStatus, "deployment">>(body) });
          return [201, { id: this.nextId++ }];
        }),
      );
    api
      .post(/\/repos\/acme\/shop\/issues\/\d+\/comments$/)
      .optionally()
      .reply((uri, body) =>
        this.report(() => {
          const issue = Number(uri.split("/").at(-2));
          this.comments.push({ issue, body: parsed<{ body: string }>(body).body });
          return [201, { id: this.nextId++ }];
        }),
      );
  }

  /** Statuses of the deployments of `env`, in order. */
  statesOf(env: string): string[] {
    const ids = new Set(this.deployments.filter((d) => d.environment === env).map((d) => d.id));
    return this.statuses.filter((s) => ids.has(s.deployment)).map((s) => s.state);
  }

  private report(ok: () => Reply): Reply {
    const canned = this.failNext.shift();
    if (canned) {
      this.refused++;
      return canned;
    }
    return this.outage ? this.refuse() : ok();
  }

  private refuse(): Reply {
    this.refused++;
    return this.refused % 2 === 1
      ? [502, { message: "Server Error" }]
      : [503, { message: "Service Unavailable" }];
  }
}
