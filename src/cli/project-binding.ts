// Projects for `syncward app ...` and `syncward controller`: the file of --projects or
// SYNCWARD_PROJECTS_FILE, matched against the checkout's `owner/name`.

import { ConfigError } from "../config/config-error.ts";
import type { SyncwardConfig } from "../config/types.ts";
import { bindRepository } from "../projects/bind.ts";
import { checkoutFullName } from "../projects/checkout-name.ts";
import { loadProjectsFile, projectsFileFrom } from "../projects/load.ts";
import { UsageError } from "./usage-error.ts";

export async function bindProjectsForCheckout(
  flag: string | undefined,
  repo: string,
  config: SyncwardConfig,
): Promise<{ config: SyncwardConfig; project?: string }> {
  const file = projectsFileFrom(flag);
  if (!file) return { config };
  let projects: Awaited<ReturnType<typeof loadProjectsFile>>;
  try {
    projects = await loadProjectsFile(file);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  // Teams need GitHub's API: the CLI matches repository globs only (said in the refusal).
  const binding = await bindRepository(projects, checkoutFullName(repo), config);
  if (binding.kind === "unmatched") throw new UsageError(`refused: ${binding.reason}`);
  return binding.kind === "matched" ? { config: binding.config, project: binding.project.name } : { config };
}
