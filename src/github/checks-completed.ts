// Checks finishing on a commit wake the environments that wait for them (requireChecks): without
// this, an environment held for a check that is still running looks again only at its next poll.
// Only a repository already running here is woken: a check report never starts a runtime.
import type { Octokit } from "./octokit.ts";
import type { RepoRuntime, Runtimes } from "./runtime.ts";

interface RepoOf {
  repository: { name: string; owner: { login: string } };
}

export interface CheckSuiteCompletedPayload extends RepoOf {
  check_suite: { head_branch: string | null; head_sha: string; app: { id: number; slug?: string } | null };
}

export interface StatusPayload extends RepoOf {
  sha: string;
  state: "pending" | "success" | "failure" | "error";
  branches: Array<{ name: string; commit: { sha: string } }>;
}

/** Who syncward is on GitHub, to tell its own check suites from everyone else's. */
export interface OwnApp {
  id?: number;
  slug: string;
}

/**
 * syncward's own identity: APP_ID when Probot runs as an app, else what GitHub says the
 * authenticated app is; when neither can be read, its suites are known by the slug "syncward".
 */
export function ownAppOf(appClient: () => Promise<Octokit>): () => Promise<OwnApp> {
  let found: Promise<OwnApp> | undefined;
  return () => {
    const id = Number(process.env.APP_ID);
    if (Number.isInteger(id) && id > 0) return Promise.resolve({ id, slug: "syncward" });
    found ??= appClient()
      .then((gh) => gh.rest.apps.getAuthenticated())
      .then(({ data }) => ({ id: data?.id, slug: data?.slug ?? "syncward" }))
      .catch(() => ({ slug: "syncward" }));
    return found;
  };
}

/** A suite of another app completed: environments tracking its branch, or waiting at its commit, look again. */
export async function onCheckSuiteCompleted(
  runtimes: Runtimes,
  payload: CheckSuiteCompletedPayload,
  own: () => Promise<OwnApp>,
): Promise<string[]> {
  const suite = payload.check_suite;
  const rt = runtimes.running(payload.repository.owner.login, payload.repository.name);
  if (!rt) return [];
  // syncward's own check runs completing must not wake it: each pass may report them again.
  const me = await own();
  if (suite.app && (me.id !== undefined ? suite.app.id === me.id : suite.app.slug === me.slug)) return [];
  return wakeWaiting(rt, suite.head_sha, suite.head_branch ? [suite.head_branch] : []);
}

/** A commit status settled (success, failure, error): the same, for branches whose head it is. */
export async function onStatus(runtimes: Runtimes, payload: StatusPayload): Promise<string[]> {
  if (payload.state === "pending") return [];
  const rt = runtimes.running(payload.repository.owner.login, payload.repository.name);
  if (!rt) return [];
  // GitHub lists the branches that contain the commit; only those it heads can be waiting at it.
  const heads = payload.branches.filter((b) => b.commit.sha === payload.sha).map((b) => b.name);
  return wakeWaiting(rt, payload.sha, heads);
}

/**
 * Nudges every environment held to requireChecks (by the rules in force) or promotion.checks that tracks one of
 * `branches` or waits at `sha`; the pass asks the gate again. Returns their names. On a replica
 * without the app's lease the wake-up is handed to the holder (Reconciler.wake).
 */
async function wakeWaiting(rt: RepoRuntime, sha: string, branches: string[]): Promise<string[]> {
  const woken: string[] = [];
  for (const controller of rt.reconciler.environments) {
    const tracked = branches.includes(controller.env.source.branch);
    if (!tracked && (await rt.reconciler.store.load(controller.instance)).pendingSync?.revision !== sha)
      continue;
    // Held for its own required checks, or for the checks its promotion names.
    if (!((await controller.rules()).requireChecks || controller.env.promotion?.checks.length)) continue;
    rt.reconciler.wake(controller.env.name);
    woken.push(controller.env.name);
  }
  return woken;
}
