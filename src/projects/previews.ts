// Whether a pull request's preview may run where its template puts it. One choke point: the
// preview's environment is narrowed under a project whose destinations are the operator's preview
// destinations, so everything narrowEnvironment() refuses for an environment (another cluster,
// another namespace, a credential not granted) it refuses for a preview too, and a destination
// the project calls production anywhere is refused on top.
import type { Floor } from "../config/floors.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import { narrowEnvironment, operatorProduction } from "./narrow.ts";
import type { Project, ProjectPreviews } from "./types.ts";

const PREVIEW_GUARDS = [
  { group: "", kind: "ResourceQuota" },
  { group: "", kind: "LimitRange" },
];

export type PreviewPlacement =
  | { allowed: true; env: EnvironmentConfig; limits: ProjectPreviews }
  | { allowed: false; reason: string };

/**
 * The preview's environment as it will run (narrowed, floored), or why it may not run. No
 * project, or a project without `previews.allowed`, means no previews: the operator opts in.
 */
export function placePreview(
  project: Project | undefined,
  preview: EnvironmentConfig,
  operatorFloors: readonly Floor[] = [],
  fullName?: string,
): PreviewPlacement {
  if (!project) {
    return {
      allowed: false,
      reason:
        "the repository belongs to no project of the operator, and previews are the operator's to allow",
    };
  }
  const limits = project.previews;
  if (!limits?.allowed) {
    return {
      allowed: false,
      reason: `project ${project.name} does not allow previews (its operator sets previews.allowed)`,
    };
  }
  const env = narrowEnvironment({ ...project, destinations: limits.destinations }, preview, operatorFloors, {
    fullName,
  });
  const violation = env.project?.violations[0];
  if (violation)
    return { allowed: false, reason: violation.replace(/^destination/, "the preview's destination") };
  // A preview destination that is also one of the project's production destinations (or a project
  // that is production throughout) is production: narrowing under the project itself says so.
  if (env.production || env.approval || operatorProduction(project, preview, fullName)) {
    return {
      allowed: false,
      reason: "its destination is production: a preview never deploys where approvals are needed",
    };
  }
  // The operator's quota and limits in the preview's namespace are syncward's: the pull request's
  // manifests may not bring their own over them.
  const guarded = env.project && {
    ...env.project,
    namespaceResourceBlacklist: [...env.project.namespaceResourceBlacklist, ...PREVIEW_GUARDS],
  };
  return { allowed: true, env: { ...env, project: guarded }, limits };
}
