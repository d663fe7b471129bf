// `{repo}` in a project's destination namespaces: the repository's own name as a namespace (a
// DNS label: lowercase, "_" and "." as "-", at most 63 characters), so a project can confine each
// repository to namespaces named after it. Pure.
import type { Project, ProjectDestination } from "./types.ts";

export function ownNamespaceOf(fullName: string): string {
  const repo = fullName.slice(fullName.indexOf("/") + 1).toLowerCase();
  return repo
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
}

/** The project's destinations with `{repo}` filled in for `fullName` (unchanged without one). */
export function destinationsFor(project: Project, fullName: string | undefined): ProjectDestination[] {
  if (fullName === undefined) return project.destinations;
  const own = ownNamespaceOf(fullName);
  return project.destinations.map((d) =>
    d.namespace.includes("{repo}") ? { ...d, namespace: d.namespace.replaceAll("{repo}", own) } : d,
  );
}
