// The custom health checks an environment's objects are judged by: the operator's, never the
// repository's. A project's own `resourceCustomizations` first (its keys win), then the
// document's top-level ones. The result is cached per (document, project), so every environment
// of a project shares one compiled set of scripts (engine/health/custom.ts caches by object).
import type { ResourceCustomizations } from "../config/types.ts";
import type { Project, ProjectsFile } from "./types.ts";

const merged = new WeakMap<ProjectsFile, WeakMap<Project, ResourceCustomizations | undefined>>();

export function healthChecksOf(
  file: ProjectsFile | undefined,
  project: Project | undefined,
): ResourceCustomizations | undefined {
  const shared = file?.resourceCustomizations;
  const own = project?.resourceCustomizations;
  if (!own || !shared) return own ?? shared;
  let perProject = merged.get(file);
  if (!perProject) {
    perProject = new WeakMap();
    merged.set(file, perProject);
  }
  if (!perProject.has(project)) perProject.set(project, { ...own, ...withoutKeys(shared, own) });
  return perProject.get(project);
}

function withoutKeys(from: ResourceCustomizations, keys: ResourceCustomizations): ResourceCustomizations {
  return Object.fromEntries(Object.entries(from).filter(([key]) => !Object.hasOwn(keys, key)));
}
