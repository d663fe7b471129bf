// The app follows the operator's projects: an edit of the ConfigMap syncward-projects (created,
// changed or deleted) is noticed within `everyMs` and every repository is loaded again under it.
// Two objects (the operator's and the shipped default), read by name: a poll costs two GETs and needs no watch.
import type { KubeClient } from "../kube/client.ts";
import { DEFAULT_PROJECTS_CONFIGMAP, PROJECTS_CONFIGMAP } from "./load.ts";

export function followProjectsConfigMap(
  client: KubeClient,
  namespace: string,
  everyMs: number,
  onChange: () => Promise<unknown> | undefined,
): () => void {
  let last: string | undefined;
  let known = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const versions = [];
      for (const name of [PROJECTS_CONFIGMAP, DEFAULT_PROJECTS_CONFIGMAP])
        versions.push(
          (await client.get("v1", "ConfigMap", namespace, name))?.metadata.resourceVersion ?? "absent",
        );
      const version = versions.join("/");
      if (known && version !== last) await onChange();
      last = version;
      known = true;
    } catch {
      // The API server away: the projects in force stay, and the next tick looks again.
    }
    if (!stopped) {
      timer = setTimeout(tick, everyMs);
      timer.unref();
    }
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
