// The installation's life: which repositories syncward runs for follows GitHub's word at once,
// not the next push. Installed, unsuspended or given new permissions: every repository of the
// installation with a config starts (or reloads). Uninstalled or suspended: all of them stop,
// leases released, nothing more written. Repositories added to or removed from the installation,
// archived or deleted: the same, one by one. A reinstall's new installation id is picked up by
// Runtimes.for on the next event of each repository. With replicas, the event reaches only the
// replica GitHub delivered it to: a stop or a rename is handed to the others through the app's
// environment states (Runtimes.remove and Runtimes.rename), so the replica holding the app stops.
import { ConfigError } from "../config/load.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { Octokit } from "./octokit.ts";
import { ProjectRefusal, reportProjectRefusalOnce } from "./project-refusal.ts";
import type { Runtimes } from "./runtime.ts";

interface RepoSummary {
  id: number;
  name: string;
  full_name: string;
  html_url: string;
  default_branch: string;
  owner: { login: string };
}

/** Starts (or, with `reload`, reloads) one repository; undefined when it has no usable config. */
async function start(
  runtimes: Runtimes,
  installationId: number,
  r: RepoSummary,
  log: Logger,
  reload = false,
  gh?: Octokit,
): Promise<string | undefined> {
  try {
    const rt = await runtimes.for(
      {
        id: r.id,
        owner: r.owner.login,
        repo: r.name,
        installationId,
        htmlUrl: r.html_url,
        defaultBranch: r.default_branch,
      },
      reload,
    );
    return rt ? r.full_name : undefined;
  } catch (err) {
    if (err instanceof ProjectRefusal) {
      log.warn({ repo: r.full_name, reason: err.message }, "repository skipped: it belongs to no project");
      const repo = { owner: r.owner.login, repo: r.name, defaultBranch: r.default_branch };
      if (gh) await reportProjectRefusalOnce(runtimes, gh, repo, err);
      return undefined;
    }
    if (!(err instanceof ConfigError)) throw err;
    log.warn({ repo: r.full_name, problems: err.problems }, "repository skipped: its config is invalid");
    return undefined;
  }
}

/** Every repository of an installation with a config gets its reconcile loop; returns their names. */
export async function startInstallation(
  runtimes: Runtimes,
  gh: Octokit,
  installationId: number,
  log: Logger,
  reload = false,
): Promise<string[]> {
  const repos = await gh.paginate(gh.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
  const started: string[] = [];
  for (const r of repos) {
    const name = await start(runtimes, installationId, r, log, reload, gh);
    if (name) started.push(name);
  }
  return started;
}

interface InstallationPayload {
  action: string;
  installation: { id: number };
}

export async function onInstallation(
  runtimes: Runtimes,
  gh: Octokit,
  payload: InstallationPayload,
  log: Logger,
): Promise<string[]> {
  const id = payload.installation.id;
  switch (payload.action) {
    case "created":
    case "unsuspend":
      return startInstallation(runtimes, gh, id, log);
    case "new_permissions_accepted":
      // What failed for want of a permission (team membership, say) may work now: start afresh.
      return startInstallation(runtimes, gh, id, log, true);
    case "deleted":
    case "suspend": {
      const stopped = await runtimes.removeInstallation(id);
      log.info(
        { installation: id, action: payload.action, stopped },
        "installation gone: its repositories stopped",
      );
      return [];
    }
    default:
      return [];
  }
}

interface InstallationRepositoriesPayload extends InstallationPayload {
  repositories_added: Array<{ full_name: string }>;
  repositories_removed: Array<{ full_name: string }>;
}

export async function onInstallationRepositories(
  runtimes: Runtimes,
  gh: Octokit,
  payload: InstallationRepositoriesPayload,
  log: Logger,
): Promise<string[]> {
  for (const r of payload.repositories_removed) {
    const [owner = "", repo = ""] = r.full_name.split("/");
    if (await runtimes.remove(owner, repo))
      log.info({ repo: r.full_name }, "repository removed from the installation: stopped");
  }
  const started: string[] = [];
  for (const r of payload.repositories_added) {
    const [owner = "", repo = ""] = r.full_name.split("/");
    const { data } = await gh.rest.repos.get({ owner, repo });
    if (data.archived) continue;
    const name = await start(runtimes, payload.installation.id, data, log, false, gh);
    if (name) started.push(name);
  }
  return started;
}

interface RepositoryPayload {
  action: string;
  repository: RepoSummary;
  changes?: {
    repository?: { name?: { from?: string } };
    owner?: { from?: { user?: { login: string }; organization?: { login: string } } };
  };
}

/**
 * A repository archived or deleted stops, and one unarchived starts again; one renamed or
 * transferred keeps its state and objects under its new name (Runtimes.rename).
 */
export async function onRepository(
  runtimes: Runtimes,
  payload: RepositoryPayload & InstallationPayload,
  log: Logger,
): Promise<void> {
  if (payload.action === "renamed" || payload.action === "transferred") {
    const { owner, name } = payload.repository;
    const oldOwner =
      payload.changes?.owner?.from?.user?.login ?? payload.changes?.owner?.from?.organization?.login;
    const oldName = payload.changes?.repository?.name?.from;
    const renamed = await runtimes.rename(oldOwner ?? owner.login, oldName ?? name, {
      id: payload.repository.id,
      owner: owner.login,
      repo: name,
      installationId: payload.installation.id,
      htmlUrl: payload.repository.html_url,
      defaultBranch: payload.repository.default_branch,
    });
    log.info(
      { repo: payload.repository.full_name, action: payload.action, renamed },
      "repository renamed: its state and objects carry over (same id)",
    );
    return;
  }
  if (payload.action === "unarchived") {
    await start(runtimes, payload.installation.id, payload.repository, log);
    return;
  }
  if (payload.action !== "archived" && payload.action !== "deleted") return;
  const { owner, name } = payload.repository;
  if (await runtimes.remove(owner.login, name))
    log.info({ repo: payload.repository.full_name, action: payload.action }, "repository gone: stopped");
}
