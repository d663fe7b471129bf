// The operator's projects on GitHub: a team's repositories read through GitHub's API (for
// `teams:` membership), and the one check run a repository that belongs to no project gets on its
// default branch's head, saying which project rule is missing. syncward deploys nothing of it.
import type { TeamLookupError, TeamRepositories } from "../projects/match.ts";
import { Cached } from "../util/cached.ts";
import { fenced } from "./markdown.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { truncateBytes } from "./truncate.ts";

export const PROJECT_CHECK = "syncward / project";

/** A repository the operator's projects do not let deploy (no project covers it, or a team cannot be read). */
export class ProjectRefusal extends Error {
  override readonly name = "ProjectRefusal";
}

/** How long a team's repositories are kept: a bootstrap of many repositories asks once per team. */
export const TEAM_REPOSITORIES_TTL_MS = 60_000;

/**
 * `GET /orgs/{org}/teams/{team_slug}/repos` for each team, kept in `cache` (one per installation:
 * the key holds it) for a minute; a failure is not kept. Errors name GitHub's status and message,
 * and what the app needs.
 */
export function teamRepositoriesOf(
  gh: Octokit,
  cache: Map<string, Cached<string[]>> = new Map(),
  installationId = 0,
): TeamRepositories {
  return (team) => {
    const key = `${installationId}:${team.toLowerCase()}`;
    let entry = cache.get(key);
    if (!entry) {
      entry = new Cached(TEAM_REPOSITORIES_TTL_MS, () => listTeamRepositories(gh, team));
      cache.set(key, entry);
    }
    return entry.get();
  };
}

async function listTeamRepositories(gh: Octokit, team: string): Promise<string[]> {
  const [org = "", slug = ""] = team.split("/");
  try {
    const repos = await gh.paginate(gh.rest.teams.listReposInOrg, { org, team_slug: slug, per_page: 100 });
    return repos.map((r) => r.full_name);
  } catch (e) {
    const err = e as { status?: number; message?: string };
    const hint =
      err.status === 404
        ? " (does the team exist, and does the app have the organization permission Members: read?)"
        : err.status === 403
          ? " (the app needs the organization permission Members: read)"
          : "";
    throw new Error(`GitHub answered ${err.status ?? "with an error"}: ${err.message ?? String(err)}${hint}`);
  }
}

/** The refusal's text for a TeamLookupError: nothing deploys until the team can be read. */
export function teamRefusal(err: TeamLookupError): ProjectRefusal {
  return new ProjectRefusal(
    `${err.message}. Until it can be read, syncward cannot tell whether this repository belongs to project ${err.project}, so it deploys nothing of it.`,
  );
}

/** One failed check run on `sha` (the default branch's head) explaining the refusal. */
export async function reportProjectRefusal(
  gh: Octokit,
  repo: RepoRef,
  sha: string,
  refusal: ProjectRefusal,
): Promise<void> {
  await gh.rest.checks.create({
    ...repo,
    name: PROJECT_CHECK,
    head_sha: sha,
    status: "completed",
    conclusion: "failure",
    completed_at: new Date().toISOString(),
    output: {
      title: "This repository belongs to no syncward project",
      summary: truncateBytes(
        `syncward deploys nothing of this repository: the operator's projects (ConfigMap \`syncward-projects\`) decide which repositories may deploy, and where.\n\n${fenced(refusal.message)}`,
        65535,
      ),
    },
  });
}

/** Where a refusal was last reported, so that every later event of the same head adds no check run. */
export interface RefusalLedger {
  firstRefusal(key: string): boolean;
}

/**
 * Reports `refusal` on the head of the repository's default branch, once per (repository, head,
 * reason): the pushes, comments and restarts that follow add nothing until one of those changes.
 */
export async function reportProjectRefusalOnce(
  ledger: RefusalLedger,
  gh: Octokit,
  repo: RepoRef & { defaultBranch: string },
  refusal: ProjectRefusal,
): Promise<void> {
  const { data } = await gh.rest.repos.getBranch({
    owner: repo.owner,
    repo: repo.repo,
    branch: repo.defaultBranch,
  });
  const key = `${repo.owner.toLowerCase()}/${repo.repo.toLowerCase()}@${data.commit.sha}:${refusal.message}`;
  if (!ledger.firstRefusal(key)) return;
  await reportProjectRefusal(gh, { owner: repo.owner, repo: repo.repo }, data.commit.sha, refusal);
}
