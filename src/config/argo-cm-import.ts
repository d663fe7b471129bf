// Converts the health checks of an Argo CD `argocd-cm` ConfigMap into the `resourceCustomizations`
// of the operator's projects document (top level: every project; or under one project), which is
// also what the CLI's --health-config reads. argocd-cm holds them in two forms, both read here:
// - `resource.customizations`: one YAML block keyed `group/Kind`, each with `health.lua` (and
//   `health.lua.useOpenLibs`);
// - `resource.customizations.health.<group_Kind>` (the script) and
//   `resource.customizations.useOpenLibs.<group_Kind>` ("true"), one key per kind; the group and
//   kind are joined by the last `_` (core kinds have no group).
// Customizations other than health (actions, ignoreDifferences, knownTypeFields...) have no
// syncward equivalent here and are dropped with a note; so is `useOpenLibs`: every script runs in
// syncward's sandbox (a script that needs os or io fails there with its error, as Unknown health).
import { stringify } from "yaml";
import { ArgoImportError } from "./argo-import.ts";
import { formatPath } from "./config-error.ts";
import { parseYamlSafely } from "./safe-yaml.ts";
import { configErrorMap, resourceCustomizationsSchema } from "./schema.ts";
import type { ResourceCustomizations } from "./types.ts";

export interface ArgoCmImport {
  /** YAML for the operator's projects document or --health-config (notes as comments). */
  yaml: string;
  resourceCustomizations: ResourceCustomizations;
  notes: string[];
}

const BLOCK_KEY = "resource.customizations";
const SPLIT_PREFIX = "resource.customizations.";
const HEALTH_FIELDS = new Set(["health.lua"]);

function useOpenLibsNote(key: string): string {
  return `${key}: useOpenLibs was dropped: every health script runs in syncward's sandbox (no os.execute, io, package or debug)`;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `cert-manager.io_Certificate` -> `cert-manager.io/Certificate`; `Pod` stays `Pod`. */
function keyFromSplit(groupKind: string): string {
  const at = groupKind.lastIndexOf("_");
  return at < 0 ? groupKind : `${groupKind.slice(0, at)}/${groupKind.slice(at + 1)}`;
}

function isArgoCdConfigMap(data: unknown): boolean {
  return isObject(data) && data.kind === "ConfigMap" && data.apiVersion === "v1";
}

/** True when `text` is a v1 ConfigMap (what import-argo dispatches on); false for anything unreadable. */
export function isArgoCdConfigMapText(text: string): boolean {
  try {
    return isArgoCdConfigMap(parseYamlSafely(text, "input").data);
  } catch {
    return false;
  }
}

/**
 * Converts the text of an argocd-cm ConfigMap.
 * @throws ConfigError when the text is not safe YAML; ArgoImportError when it holds no health
 * checks or yields an invalid `resourceCustomizations` (a script that does not compile, a bad key).
 */
export function importArgoConfigMap(yamlText: string): ArgoCmImport {
  const { data: cm } = parseYamlSafely(yamlText, "argocd-cm");
  if (!isArgoCdConfigMap(cm)) throw new ArgoImportError(["expected a v1 ConfigMap (argocd-cm)"]);
  const data = isObject((cm as Json).data) ? ((cm as Json).data as Json) : {};
  const notes: string[] = [];
  const problems: string[] = [];
  const result: Record<string, Json> = {};
  const entry = (key: string): Json => {
    result[key] ??= {};
    return result[key];
  };

  const block = data[BLOCK_KEY];
  if (block !== undefined) {
    let parsed: unknown;
    try {
      parsed = typeof block === "string" ? parseYamlSafely(block, BLOCK_KEY).data : undefined;
    } catch (err) {
      problems.push(`data["${BLOCK_KEY}"] is not valid YAML: ${(err as Error).message}`);
    }
    if (parsed !== undefined && parsed !== null && !isObject(parsed)) {
      problems.push(`data["${BLOCK_KEY}"] must be a YAML mapping keyed group/Kind`);
    }
    for (const [key, value] of Object.entries(isObject(parsed) ? parsed : {})) {
      if (!isObject(value)) {
        problems.push(`data["${BLOCK_KEY}"].${key} must be a mapping`);
        continue;
      }
      for (const [field, v] of Object.entries(value)) {
        if (field === "health.lua.useOpenLibs") notes.push(useOpenLibsNote(key));
        else if (HEALTH_FIELDS.has(field)) entry(key)[field] = v;
        else notes.push(`${key}: ${field} has no syncward equivalent and was dropped`);
      }
    }
  }

  for (const [name, value] of Object.entries(data)) {
    if (!name.startsWith(SPLIT_PREFIX)) continue;
    const rest = name.slice(SPLIT_PREFIX.length);
    const dot = rest.indexOf(".");
    const what = dot < 0 ? rest : rest.slice(0, dot);
    const key = keyFromSplit(dot < 0 ? "" : rest.slice(dot + 1));
    if (what === "health" && dot > 0) entry(key)["health.lua"] = value;
    else if (what === "useOpenLibs" && dot > 0) notes.push(useOpenLibsNote(key));
    else notes.push(`data["${name}"] has no syncward equivalent and was dropped`);
  }

  // Keep only kinds that have a health check.
  for (const [key, value] of Object.entries(result))
    if (value["health.lua"] === undefined) delete result[key];
  if (problems.length === 0 && Object.keys(result).length === 0) {
    problems.push(
      `no health checks found (expected data["${BLOCK_KEY}"] or data["${SPLIT_PREFIX}health.<group_Kind>"])`,
    );
  }
  if (problems.length > 0) throw new ArgoImportError(problems);

  const header = [
    "# Imported from Argo CD's argocd-cm: the operator's custom health checks. Paste at the top level of",
    "# syncward's projects document (ConfigMap syncward-projects, key projects.yaml) for every project,",
    "# or under one project; or pass this file to the CLI as --health-config. Never in a repository's config.",
    ...notes.map((note) => `# NOTE: ${note}`),
  ];
  const yaml = `${header.join("\n")}\n${stringify({ resourceCustomizations: result }, { lineWidth: 0 })}`;

  // Validate the text the user will paste, not only the object it came from.
  const pasted = parseYamlSafely(yaml, "imported resourceCustomizations").data as Json;
  const checked = resourceCustomizationsSchema.safeParse(pasted.resourceCustomizations, {
    error: configErrorMap,
  });
  if (!checked.success) {
    throw new ArgoImportError(
      checked.error.issues.map(
        (issue) => `${formatPath(["resourceCustomizations", ...issue.path])}: ${issue.message}`,
      ),
    );
  }
  return { yaml, resourceCustomizations: checked.data, notes };
}
