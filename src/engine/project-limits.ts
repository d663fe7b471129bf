// The operator's project limits on the objects of one sync (config's EnvironmentProject): checked
// with the environment's own policy in prepare.ts, so a kind outside the project fails the whole
// sync before anything is written, naming the project's rule.
import type { EnvironmentConfig } from "../config/types.ts";
import { globMatch } from "./diff/glob.ts";

const matches = (rule: { group: string; kind: string }, group: string, kind: string) =>
  globMatch(rule.group, group) && globMatch(rule.kind, kind);
const show = (r: { group: string; kind: string }) => `{group: "${r.group}", kind: ${r.kind}}`;

/** The repository's config reaching outside its project: every sync fails with these. */
export function projectViolations(env: EnvironmentConfig): string[] {
  return (env.project?.violations ?? []).map((v) => `environment ${env.name}: ${v}`);
}

/** Why the project forbids an object of `group`/`kind` (name is the object's kubectl name), or undefined. */
export function projectKindProblem(
  env: EnvironmentConfig,
  name: string,
  group: string,
  kind: string,
  namespaced: boolean,
): string | undefined {
  const project = env.project;
  if (!project) return undefined;
  if (namespaced) {
    const rule = project.namespaceResourceBlacklist.find((r) => matches(r, group, kind));
    return rule
      ? `${name}: kind ${kind} is denied by project ${project.name} (namespaceResourceBlacklist: ${show(rule)})`
      : undefined;
  }
  if (project.clusterResourceWhitelist.some((r) => matches(r, group, kind))) return undefined;
  const listed = project.clusterResourceWhitelist.map(show).join(", ") || "none";
  return `${name}: cluster-scoped kind ${kind} is not allowed by project ${project.name} (clusterResourceWhitelist: ${listed})`;
}
