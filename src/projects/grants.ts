// Operator-held credentials stay with their project: a repository's config may name a signing key
// (notify secretEnv), a chart repository's credentials or a cluster only where its project grants
// it (grants), so one tenant cannot sign or authenticate as another. One rule for every kind of
// credential; each kind says how a name is matched. Pure: (project, environment) -> violations.
import type { EnvironmentConfig } from "../config/types.ts";
import { globMatch } from "./glob.ts";
import type { Project, ProjectGrants } from "./types.ts";

export type GrantKind = keyof ProjectGrants;

const normalize = (url: string) => url.trim().replace(/\/+$/, "").toLowerCase();

/** How a granted entry covers a name of each kind. */
const COVERS: Record<GrantKind, (granted: string, name: string) => boolean> = {
  notifyKeys: (g, n) => g === n,
  chartRepositories: (g, n) => normalize(n) === normalize(g) || normalize(n).startsWith(`${normalize(g)}/`),
  clusters: (g, n) => globMatch(g, n),
};

/** Whether `project` grants its repositories the credential `name` of `kind`. */
export function granted(project: Project, kind: GrantKind, name: string): boolean {
  return project.grants[kind].some((g) => COVERS[kind](g, name));
}

/** The credentials `env` names that its project does not grant, as violations. */
export function grantViolations(project: Project, env: EnvironmentConfig): string[] {
  const out: string[] = [];
  for (const [i, target] of env.notify.entries())
    if (target.secretEnv && !granted(project, "notifyKeys", target.secretEnv))
      out.push(
        `notify[${i}].secretEnv ${target.secretEnv} is not granted to project ${project.name} (grants.notifyKeys: ${project.grants.notifyKeys.join(", ") || "none"}): a repository signs only with the keys its project grants`,
      );
  const repoURL = env.source.repoURL;
  if (
    repoURL &&
    project.grants.chartRepositories.length > 0 &&
    !granted(project, "chartRepositories", repoURL)
  )
    out.push(
      `source.repoURL ${repoURL} is not granted to project ${project.name} (grants.chartRepositories: ${project.grants.chartRepositories.join(", ")})`,
    );
  return out;
}
