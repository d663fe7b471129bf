// The app's projects: the `projects.yaml` key of the ConfigMap `syncward-projects` in syncward's
// state namespace. No ConfigMap: no projects (today's behaviour); a ConfigMap without the key or
// with an invalid document: an error naming it, so a typo never silently lifts every limit.
import { ConfigError } from "../config/config-error.ts";
import type { KubeClient } from "../kube/client.ts";
import { PROJECTS_CONFIGMAP, PROJECTS_KEY, parseProjects } from "./load.ts";
import type { ProjectsFile } from "./types.ts";

export async function loadProjectsConfigMap(
  client: KubeClient,
  namespace: string,
): Promise<ProjectsFile | undefined> {
  const cm = (await client.get("v1", "ConfigMap", namespace, PROJECTS_CONFIGMAP)) as
    | { data?: Record<string, string> }
    | undefined;
  if (!cm) return undefined;
  const where = `configmap ${namespace}/${PROJECTS_CONFIGMAP} key ${PROJECTS_KEY}`;
  const text = cm.data?.[PROJECTS_KEY];
  if (text === undefined)
    throw new ConfigError(where, [
      { path: "", message: `is missing: put the projects document under data["${PROJECTS_KEY}"]` },
    ]);
  return parseProjects(text, where);
}
