// The app's projects: the `projects.yaml` key of the operator's ConfigMap `syncward-projects` in
// syncward's state namespace, else of the shipped default `syncward-projects-default` (deploy/
// owns only the default, so an upgrade never overwrites the operator's). Neither: no projects
// (a single-team installation); a ConfigMap without the key or with an invalid document: an
// error naming it, so a typo never silently lifts every limit.
import { ConfigError } from "../config/config-error.ts";
import type { KubeClient } from "../kube/client.ts";
import { DEFAULT_PROJECTS_CONFIGMAP, PROJECTS_CONFIGMAP, PROJECTS_KEY, parseProjects } from "./load.ts";
import type { ProjectsFile } from "./types.ts";

export async function loadProjectsConfigMap(
  client: KubeClient,
  namespace: string,
): Promise<ProjectsFile | undefined> {
  for (const name of [PROJECTS_CONFIGMAP, DEFAULT_PROJECTS_CONFIGMAP]) {
    const cm = (await client.get("v1", "ConfigMap", namespace, name)) as
      | { data?: Record<string, string> }
      | undefined;
    if (cm) return parseConfigMap(cm, `configmap ${namespace}/${name} key ${PROJECTS_KEY}`);
  }
  return undefined;
}

function parseConfigMap(cm: { data?: Record<string, string> }, where: string): ProjectsFile {
  const text = cm.data?.[PROJECTS_KEY];
  if (text === undefined)
    throw new ConfigError(where, [
      { path: "", message: `is missing: put the projects document under data["${PROJECTS_KEY}"]` },
    ]);
  return parseProjects(text, where);
}
