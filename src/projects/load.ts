// Reading the operator's projects document, from the ConfigMap `syncward-projects` (key
// `projects.yaml`) or from a file, with the config's error style: every problem as
// `<file>: <path>: <problem>`, unknown fields with a "did you mean".
import { ConfigError } from "../config/config-error.ts";
import { readConfigFileText, sortByLine, toConfigIssues } from "../config/load.ts";
import { parseYamlSafely } from "../config/safe-yaml.ts";
import { safeParseProjects } from "./schema.ts";
import type { ProjectsFile } from "./types.ts";

export const PROJECTS_CONFIGMAP = "syncward-projects";
/** The shipped default (deploy/projects-default.yaml), in force only while PROJECTS_CONFIGMAP is absent. */
export const DEFAULT_PROJECTS_CONFIGMAP = "syncward-projects-default";
export const PROJECTS_KEY = "projects.yaml";

/** @throws ConfigError listing every problem, named after `file`. */
export function parseProjects(text: string, file: string): ProjectsFile {
  const { data, lineAt } = parseYamlSafely(text, file);
  if (data === null || data === undefined)
    throw new ConfigError(file, [{ path: "", message: "is empty: it must define `projects`" }]);
  const result = safeParseProjects(data);
  if (result.success) return result.data;
  throw new ConfigError(file, sortByLine(result.issues.flatMap((issue) => toConfigIssues(issue, lineAt))));
}

/** @throws ConfigError (also when the file cannot be read). */
export async function loadProjectsFile(path: string): Promise<ProjectsFile> {
  return parseProjects(await readConfigFileText(path), path);
}

/** Where the CLI and controller read projects from: `--projects FILE`, else SYNCWARD_PROJECTS_FILE. */
export function projectsFileFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return flag || env.SYNCWARD_PROJECTS_FILE?.trim() || undefined;
}
