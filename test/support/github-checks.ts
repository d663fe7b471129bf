// GitHub mocks for tests that read a revision through the tarball API and look at check runs.
import { execFileSync } from "node:child_process";
import { REPO_PATH } from "./app.ts";
import type { TestRepo } from "./git-repo.ts";
import { GITHUB_API, type GitHubMock } from "./github.ts";

const CODELOAD = "https://codeload.github.com";

/** GitHub serves the repository at `sha` once: a redirect, then a gzipped tar with one top-level folder. */
export function mockTarball(mock: GitHubMock, repo: TestRepo, sha: string): void {
  const download = `/acme/shop/legacy.tar.gz/${sha}?token=t`;
  mock.api.get(`${REPO_PATH}/tarball/${sha}`).reply(302, "", { location: `${CODELOAD}${download}` });
  mock
    .scope(CODELOAD)
    .get(download)
    .reply(
      200,
      () =>
        execFileSync("git", ["archive", "--format=tar.gz", `--prefix=acme-shop-${sha.slice(0, 7)}/`, sha], {
          cwd: repo.dir,
        }),
      { "content-type": "application/x-gzip" },
    );
}

/**
 * GitHub's check runs and combined status of commit `sha`, as the requireChecks adapter reads them.
 * Every run (filter=all): GitHub's default, the latest of each name and app, would hide a failing
 * run of one job behind a newer run of another.
 */
export function mockCommitChecks(
  mock: GitHubMock,
  sha: string,
  runs: ReadonlyArray<object>,
  statuses: ReadonlyArray<{ context: string; state: string }>,
): void {
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/check-runs`)
    .query({ filter: "all", per_page: "100" })
    .reply(200, { total_count: runs.length, check_runs: runs });
  mock.api
    .get(`${REPO_PATH}/commits/${sha}/status`)
    .query(true)
    .reply(200, { state: "pending", sha, total_count: statuses.length, statuses });
}

export interface CheckRun {
  name: string;
  head_sha: string;
  status?: string;
  conclusion?: string;
  details_url?: string;
  output?: {
    title: string;
    summary: string;
    text?: string;
    annotations?: Array<{ path: string; start_line: number; message: string }>;
  };
}

const given = new WeakMap<object, Set<number>>();

/**
 * The id of the run a creation made: 9001 + its place in `into`. Found by its content, not by
 * `into`'s length when the answer is built: two creations in flight at once (two environments)
 * are both captured before either is answered.
 */
export function checkRunId(
  into: Array<Pick<CheckRun, "name" | "head_sha">>,
  body: Pick<CheckRun, "name" | "head_sha">,
): number {
  const taken = given.get(into) ?? new Set<number>();
  given.set(into, taken);
  const i = into.findIndex((c, n) => !taken.has(n) && c.name === body.name && c.head_sha === body.head_sha);
  const index = i < 0 ? into.length - 1 : i;
  taken.add(index);
  return 9001 + index;
}

/**
 * Accepts `times` check-run creations and `updates` updates, and keeps each run in `into` as it
 * stands after its updates (a sync's run is created in progress, then completed). Run ids are
 * 9001, 9002, ... in the order of `into`, across calls on the same array.
 */
export function captureCheckRuns(mock: GitHubMock, into: CheckRun[], times: number, updates = 0): void {
  if (times > 0)
    mock.api
      .post(`${REPO_PATH}/check-runs`, (body: CheckRun) => {
        into.push(body);
        return true;
      })
      .times(times)
      .reply(201, (_uri: string, body: CheckRun) => {
        const id = checkRunId(into, body);
        return { id, html_url: `https://github.com/acme/shop/runs/${id}` };
      });
  if (updates > 0)
    mock.api
      .patch(/\/check-runs\/9\d{3}$/, () => true)
      .times(updates)
      .reply(200, (uri: string, body: Partial<CheckRun>) => {
        const id = Number(uri.split("/").at(-1));
        const run = into[id - 9001];
        if (run) Object.assign(run, body);
        return { id, html_url: `https://github.com/acme/shop/runs/${id}` };
      });
}

/**
 * Answers the reports however often they come, until the next assertDone (which clears them):
 * every check run is kept in `runs` as it stands after its updates, every status of deployment
 * `deploymentId` in `statuses`. With `createDeployment`, creating that deployment is answered too.
 */
export function captureReports(
  mock: GitHubMock,
  into: { runs: CheckRun[]; statuses: string[] },
  deploymentId: number,
  createDeployment: "once" | "optionally" | "no" = "no",
): void {
  // A scope of its own: persist() holds for every later interceptor of a scope.
  const api = mock.scope(GITHUB_API).persist();
  const { runs, statuses } = into;
  api
    .post(`${REPO_PATH}/check-runs`)
    .optionally()
    .reply(201, (_uri: string, body: CheckRun) => {
      runs.push(structuredClone(body));
      return { id: 9000 + runs.length, html_url: `https://github.com/acme/shop/runs/${9000 + runs.length}` };
    });
  api
    .patch(/\/check-runs\/9\d{3}$/)
    .optionally()
    .reply(200, (uri: string, body: Partial<CheckRun>) => {
      const id = Number(uri.split("/").at(-1));
      Object.assign(runs[id - 9001] ?? {}, body);
      return { id, html_url: `https://github.com/acme/shop/runs/${id}` };
    });
  if (createDeployment === "once")
    mock.api.post(`${REPO_PATH}/deployments`).reply(201, { id: deploymentId, environment: "prod" });
  if (createDeployment === "optionally")
    api.post(`${REPO_PATH}/deployments`).optionally().reply(201, { id: deploymentId, environment: "prod" });
  api
    .post(`${REPO_PATH}/deployments/${deploymentId}/statuses`)
    .optionally()
    .reply(201, (_uri: string, body: { state: string }) => {
      statuses.push(body.state);
      return { id: statuses.length, state: body.state };
    });
}
