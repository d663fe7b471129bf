// The operator's floor on who approves a production environment (src/config/floors.ts): whatever
// the repository's approval.users, approval.allowAuthor or commands.approve say, an approver needs
// the floor's repository permission (write or higher, listed approvers too), and a first
// deployment is judged on every commit since the environment appeared in the config, not on the
// pending commit alone: otherwise a contributor's change reaches a new production environment
// through a later commit by someone else, which the contributor then approves.

import { DEFAULT_CONFIG_FILE as CONFIG_PATH } from "../config/load.ts";
import { parseYamlSafely } from "../config/safe-yaml.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import { allows, type Permission } from "./authorize.ts";
import type { Octokit, RepoRef } from "./octokit.ts";

/** Why `permission` may not approve under `env`'s operator floor, or undefined. */
export function floorPermissionRefusal(
  env: Pick<EnvironmentConfig, "floor" | "name">,
  permission: Permission,
): string | undefined {
  const floor = env.floor;
  if (!floor || allows(permission, floor.approverPermission)) return undefined;
  return `approving ${env.name} needs **${floor.approverPermission}** permission on this repository under the operator's floor (${floor.sources.join(", ")}), whatever the repository's approval or commands settings say, and you have **${permission}**`;
}

/** Most config commits walked back to find where an environment appeared. */
const MAX_CONFIG_COMMITS = 100;

/**
 * The revision a first deployment of `envName` is measured from: the parent of the oldest commit
 * of the unbroken run of config commits (newest first, from `head`) whose config names the
 * environment. undefined: the environment is in the repository's first commit (the range is all
 * of `head`'s history up to it) or cannot be told (the caller refuses).
 */
export async function environmentAppearedAfter(
  gh: Octokit,
  repo: RepoRef,
  head: string,
  envName: string,
): Promise<{ base: string } | { refusal: string }> {
  const { data: commits } = await gh.rest.repos.listCommits({
    ...repo,
    sha: head,
    path: CONFIG_PATH,
    per_page: MAX_CONFIG_COMMITS,
  });
  let introduced: (typeof commits)[number] | undefined;
  for (const c of commits) {
    if (!(await namesEnvironment(gh, repo, c.sha, envName))) break;
    introduced = c;
  }
  const parent = introduced?.parents[0]?.sha;
  if (introduced && parent) return { base: parent };
  return {
    refusal: introduced
      ? `${envName} has been in the config since the repository's first commit, and a first deployment under the operator's floor is judged on every commit since the environment appeared: approve after its first deployment is made by someone who contributed nothing, or ask the operator`
      : `cannot tell when ${envName} appeared in ${CONFIG_PATH} (within its last ${MAX_CONFIG_COMMITS} changes), and a first deployment under the operator's floor is judged on every commit since then`,
  };
}

async function namesEnvironment(gh: Octokit, repo: RepoRef, sha: string, envName: string): Promise<boolean> {
  let text: string;
  try {
    const { data } = await gh.rest.repos.getContent({ ...repo, path: CONFIG_PATH, ref: sha });
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return false;
    text = Buffer.from(data.content, "base64").toString("utf8");
  } catch (err) {
    if ((err as { status?: number }).status === 404) return false;
    throw err;
  }
  try {
    const { data } = parseYamlSafely(text, CONFIG_PATH);
    const envs = (data as { environments?: Array<{ name?: unknown }> } | null)?.environments;
    return Array.isArray(envs) && envs.some((e) => e?.name === envName);
  } catch {
    return false;
  }
}
