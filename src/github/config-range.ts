// An environment that tracks another branch than the default one (`release`) takes its config
// from the default branch: a config commit there (a new image tag in helm values, another path)
// moves what it would deploy while its own branch stays put, so the range of its branch (H..H)
// names none of the people who made the change. They are found here: the commits of the default
// branch from the config commit the environment was deployed under to the one in force, their
// pull requests and pushers (range.ts), who count as contributors like the range's own.
import { renderConfigMoved } from "../config/stricter.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import type { EnvironmentState } from "../state/types.ts";
import { type Contributor, contributorsOf } from "./contributors.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { fetchRange, RangeTooLong } from "./range.ts";

const short = (sha: string) => sha.slice(0, 7);

/**
 * Who changed `env`'s config on `defaultBranch` since its deployed revision was deployed; or why
 * that cannot be told (then nobody may approve, as with an unreadable range).
 */
export async function configContributors(
  gh: Octokit,
  repo: RepoRef,
  defaultBranch: string,
  env: EnvironmentConfig,
  state: Pick<EnvironmentState, "deployedRules">,
): Promise<{ people: Contributor[] } | { refusal: string }> {
  // On the default branch the config commits are in the environment's own range.
  if (env.source.branch === defaultBranch) return { people: [] };
  const from = state.deployedRules?.configRevision;
  const to = env.configRevision;
  // Only a config change that moves what this environment renders changes what it would deploy
  // (one that loosens a guard is held to the stricter rule). The head read beside a config may be
  // a later commit than the config's own: equal commits still read that one (from...from is it alone).
  if (!renderConfigMoved(env, state.deployedRules)) return { people: [] };
  if (!from)
    return {
      refusal: `the config on \`${defaultBranch}\` changed what ${env.name} would deploy since it was deployed, and syncward did not record which \`${defaultBranch}\` commit that deployment's config came from, so it cannot tell who changed it (set approval.allowAuthor: true, or deploy with \`syncward app sync\`)`,
    };
  let range: Awaited<ReturnType<typeof fetchRange>>;
  try {
    range = await fetchRange(gh, repo, from, to ?? defaultBranch, defaultBranch);
  } catch (err) {
    if (err instanceof RangeTooLong)
      return { refusal: `the config changes on \`${defaultBranch}\`: ${err.message}` };
    throw err;
  }
  if (range.pushes === undefined)
    return {
      refusal: `cannot tell who pushed the config changes on \`${defaultBranch}\` since ${short(from)} (GitHub does not show syncward the repository's activity: ${range.activityStatus ?? "unreadable"}); grant syncward's GitHub App read access to it (or set approval.allowAuthor: true)`,
    };
  // The config pull requests' own commits and pushers, as for the environment's own range.
  if (range.unreadable)
    return {
      refusal: `cannot read ${range.unreadable.join("; ")} (the config changes on \`${defaultBranch}\` since ${short(from)}), so nobody can be sure they did not contribute (or set approval.allowAuthor: true)`,
    };
  return {
    people: contributorsOf(range).map((c) => ({
      ...c,
      reasons: c.reasons.map((r) => `${r} (the config on ${defaultBranch})`),
    })),
  };
}
