// `--health-config FILE`: the operator's custom health checks for the CLI, in the shape
// `syncward import-argo argocd-cm.yaml` prints (a top-level `resourceCustomizations`), or a whole
// projects document (its top-level checks). Never a repository's `.github/syncward.yml`.
import { ConfigError } from "../config/config-error.ts";
import { readConfigFileText, sortByLine, toConfigIssues } from "../config/load.ts";
import { parseYamlSafely } from "../config/safe-yaml.ts";
import {
  configErrorMap,
  resourceCustomizationsSchema,
  schemaIssuesOf,
  strictObject,
} from "../config/schema.ts";
import type { ResourceCustomizations } from "../config/types.ts";
import { parseProjects } from "./load.ts";

const healthConfigSchema = strictObject({ resourceCustomizations: resourceCustomizationsSchema });

/** @throws ConfigError naming the file and every problem. */
export async function loadHealthConfig(path: string): Promise<ResourceCustomizations> {
  const text = await readConfigFileText(path);
  const { data, lineAt } = parseYamlSafely(text, path);
  if (typeof data === "object" && data !== null && "projects" in data)
    return parseProjects(text, path).resourceCustomizations ?? {};
  const result = healthConfigSchema.safeParse(data ?? {}, { error: configErrorMap });
  if (result.success) return result.data.resourceCustomizations;
  throw new ConfigError(
    path,
    sortByLine(schemaIssuesOf(result.error).flatMap((issue) => toConfigIssues(issue, lineAt))),
  );
}
