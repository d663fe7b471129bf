// The published JSON Schema of the operator's projects document, generated from the zod schema's
// input side like the config's (tools/gen-schema.ts writes schema/syncward-projects.schema.json).
import { jsonSchemaFor } from "../config/json-schema.ts";
import { projectsSchema } from "./schema.ts";

export const PROJECTS_SCHEMA_ID = "https://unpkg.com/syncward/schema/syncward-projects.schema.json";

export function buildProjectsJsonSchema(): Record<string, unknown> {
  return jsonSchemaFor(projectsSchema, {
    $id: PROJECTS_SCHEMA_ID,
    title: "syncward projects (ConfigMap syncward-projects, key projects.yaml; or SYNCWARD_PROJECTS_FILE)",
    description:
      "The operator's projects: which repositories may deploy to which clusters and namespaces, which kinds, with which sync windows, floors and per-destination ServiceAccounts (Argo CD's AppProject, in syncward's words).",
  });
}
