// The operator's projects on GitHub: what the app learns of a repository to match it (its id,
// for the pins of listed repositories; its organization custom properties, only where the
// organization alone may set them), and the one check run a repository that belongs to no
// project gets on its default branch's head, saying which project rule is missing. syncward
// deploys nothing of it.
import type { MembershipLookupError, RepositoryFacts, RepositoryPins } from "../projects/match.ts";
import { Cached } from "../util/cached.ts";
import { fenced } from "./markdown.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { truncateBytes } from "./truncate.ts";

export const PROJECT_CHECK = "syncward / project";

/** A repository the operator's projects do not let deploy (no project covers it, or its facts cannot be read). */
export class ProjectRefusal extends Error {
  override readonly name = "ProjectRefusal";
}

/** How long a property definition is kept: a bootstrap of many repositories asks once per property. */
export const PROPERTY_DEFINITION_TTL_MS = 60_000;

/**
 * The facts of `repo` read from GitHub: `GET /repos/{owner}/{repo}` for its id, and for custom
 * properties first each definition (`GET /orgs/{org}/properties/schema/{name}`, kept in `cache`
 * for a minute per installation), refused unless `values_editable_by` is `org_actors` (absent
 * means the same, GitHub's default), then the repository's values.
 */
export function repositoryFactsOf(
  gh: Octokit,
  repo: RepoRef,
  pins: RepositoryPins,
  cache: Map<string, Cached<string>> = new Map(),
  installationId = 0,
): RepositoryFacts {
  let id: Promise<number> | undefined;
  return {
    pins,
    id: () => {
      id ??= gh.rest.repos.get({ ...repo }).then(
        (r) => r.data.id,
        (e) => Promise.reject(lookupError(`cannot read the repository's id`, e)),
      );
      return id;
    },
    properties: async (names) => {
      for (const name of names) {
        const key = `${installationId}:${repo.owner.toLowerCase()}:${name}`;
        let entry = cache.get(key);
        if (!entry) {
          entry = new Cached(PROPERTY_DEFINITION_TTL_MS, () => editableBy(gh, repo.owner, name));
          cache.set(key, entry);
        }
        const who = await entry.get();
        if (who !== "org_actors")
          throw new Error(
            `custom property ${name} may be set by repository admins (values_editable_by: ${who}), so it cannot decide membership: the organization sets it to org_actors, or the project selects repositories by name`,
          );
      }
      let values: Array<{ property_name: string; value: unknown }>;
      try {
        ({ data: values } = await gh.request("GET /repos/{owner}/{repo}/properties/values", { ...repo }));
      } catch (e) {
        throw lookupError("cannot read the repository's custom properties", e);
      }
      return new Map(
        values.filter((v) => typeof v.value === "string").map((v) => [v.property_name, v.value as string]),
      );
    },
  };
}

async function editableBy(gh: Octokit, org: string, name: string): Promise<string> {
  try {
    const { data } = await gh.request("GET /orgs/{org}/properties/schema/{custom_property_name}", {
      org,
      custom_property_name: name,
    });
    return data.values_editable_by ?? "org_actors";
  } catch (e) {
    throw lookupError(`cannot read the definition of custom property ${name}`, e);
  }
}

function lookupError(what: string, e: unknown): Error {
  const err = e as { status?: number; message?: string };
  const hint =
    err.status === 404 || err.status === 403
      ? " (the app needs the repository permission Metadata: read and the organization permission Custom properties: read)"
      : "";
  return new Error(
    `${what}: GitHub answered ${err.status ?? "with an error"}: ${err.message ?? String(err)}${hint}`,
  );
}

/** The refusal's text for a MembershipLookupError: nothing deploys until it can be read. */
export function membershipRefusal(err: MembershipLookupError): ProjectRefusal {
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
