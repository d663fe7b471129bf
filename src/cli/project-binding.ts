// Projects for `syncward app ...` and `syncward controller`: the file of --projects or
// SYNCWARD_PROJECTS_FILE, matched against the checkout's `owner/name`.

import { ConfigError } from "../config/config-error.ts";
import type { ResourceCustomizations, SyncwardConfig } from "../config/types.ts";
import { bindRepository } from "../projects/bind.ts";
import { checkoutFullName } from "../projects/checkout-name.ts";
import { healthChecksOf } from "../projects/health-checks.ts";
import { loadHealthConfig } from "../projects/health-config.ts";
import { loadProjectsFile, projectsFileFrom } from "../projects/load.ts";
import { UsageError } from "./usage-error.ts";

export async function bindProjectsForCheckout(
  flag: string | undefined,
  repo: string,
  config: SyncwardConfig,
  healthConfig?: string,
): Promise<{ config: SyncwardConfig; project?: string; healthChecks?: ResourceCustomizations }> {
  const fromFlag = healthConfig === undefined ? undefined : await healthChecksFrom(healthConfig);
  const file = projectsFileFrom(flag);
  if (!file) return { config, healthChecks: fromFlag };
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
  // The operator's checks: --health-config, else the projects document's for this project.
  const project = binding.kind === "matched" ? binding.project : undefined;
  const healthChecks = fromFlag ?? healthChecksOf(projects, project);
  return project ? { config: binding.config, project: project.name, healthChecks } : { config, healthChecks };
}

/** The operator's custom health checks from `--health-config FILE`. */
export async function healthChecksFrom(file: string): Promise<ResourceCustomizations> {
  try {
    return await loadHealthConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}
