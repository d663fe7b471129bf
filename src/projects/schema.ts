// The schema of the operator's projects document (`projects.yaml` in the ConfigMap
// `syncward-projects`, or the file of SYNCWARD_PROJECTS_FILE / --projects): the source of truth
// for src/projects/types.ts, the messages and schema/syncward-projects.schema.json. Field names
// follow Argo CD's AppProject where it has one.
import { z } from "zod";
import {
  configErrorMap,
  kindSchema,
  type SchemaIssue,
  schemaIssuesOf,
  strictObject,
  syncWindowSchema,
  teamName,
} from "../config/schema.ts";
import type { KindRule, Project, ProjectDestination, ProjectFloors, ProjectsFile } from "./types.ts";

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// owner/name with `*` and `?` globs; GitHub's owner and repository characters otherwise.
const REPO_GLOB_RE = /^[A-Za-z0-9*?][A-Za-z0-9*?-]*\/[A-Za-z0-9_.*?-]+$/;
const NAMESPACE_GLOB_RE = /^!?[a-z0-9*?]([-a-z0-9*?]*[a-z0-9*?])?$/;
const SA_NAME = "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";
const SERVICE_ACCOUNT_RE = new RegExp(`^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?:)?${SA_NAME}$`);

const destination = strictObject({
  namespace: z
    .string()
    .regex(NAMESPACE_GLOB_RE, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a namespace glob: lowercase letters, digits, "-", "*" and "?", with an optional leading "!" to deny`,
    })
    .describe('Namespaces allowed (glob, e.g. "team-a-*"); a leading "!" denies ("!kube-*").'),
  context: z
    .string()
    .min(1)
    .optional()
    .describe("kubeconfig context (glob) of the cluster. Absent, and without inCluster: any cluster."),
  inCluster: z.boolean().optional().describe("The cluster syncward runs in."),
  // Clusters by name (the registry's Secrets, or kubeconfig contexts): see narrow.ts clusterMatches.
  cluster: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Name (glob) of a cluster of syncward's registry or a kubeconfig context, e.g. \"prod-*\" (Argo CD's destinations[].name). Absent, with no context and no inCluster: any cluster.",
    ),
  serviceAccount: z
    .string()
    .regex(SERVICE_ACCOUNT_RE, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a ServiceAccount: write NAME (in the destination namespace) or NAMESPACE:NAME`,
    })
    .optional()
    .describe(
      "Every write of an environment deploying here (apply, patch, delete, hooks) impersonates this ServiceAccount: NAME in the destination namespace, or NAMESPACE:NAME (Argo CD's destinationServiceAccounts).",
    ),
})
  .refine((d) => !(d.inCluster && d.context !== undefined), {
    path: ["context"],
    error: "cannot be combined with inCluster: true (choose one)",
  })
  .refine((d) => !(d.cluster !== undefined && (d.context !== undefined || d.inCluster)), {
    path: ["cluster"],
    error: "cannot be combined with context or inCluster: true (choose one)",
  })
  .describe("A cluster and namespaces the project's repositories may deploy to.");

const floors = strictObject({
  productionApprovals: z
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe(
      "Approvals every environment marked production needs at least (the stricter of this and the repository's wins).",
    ),
  requireSignedCommits: z
    .boolean()
    .optional()
    .describe("true: every environment deploys only commits GitHub shows as Verified."),
  forkPreviews: z
    .literal("never")
    .optional()
    .describe('"never": pull requests from forks are never previewed against the live cluster.'),
})
  .prefault({})
  .describe("Settings no repository of the project can lower.");

const project = strictObject({
  name: z
    .string()
    .max(63)
    .regex(NAME_RE, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a valid project name: lowercase letters, digits and "-"`,
    })
    .describe('Unique name of the project, e.g. "team-a"; "default" is an ordinary name.'),
  description: z.string().optional().describe("What the project is for."),
  repositories: z
    .array(
      z.string().regex(REPO_GLOB_RE, {
        error: (i) =>
          `${JSON.stringify(i.input)} is not a repository glob: write "owner/name" ("*" and "?" match)`,
      }),
    )
    .default([])
    .describe('Repositories of the project, as "owner/name" globs ("acme/team-a-*", "*/*").'),
  teams: z
    .array(teamName)
    .default([])
    .describe("GitHub teams (org/team-slug) whose repositories belong to the project."),
  destinations: z
    .array(destination)
    .min(1, {
      error: "must list at least one destination (a project that may deploy nowhere covers nothing)",
    })
    .describe("Where the project's repositories may deploy (Argo CD's destinations)."),
  clusterResourceWhitelist: z
    .array(kindSchema)
    .default([])
    .describe(
      'Cluster-scoped kinds the repositories may manage (default none; {group: "*", kind: "*"} for all).',
    ),
  namespaceResourceBlacklist: z
    .array(kindSchema)
    .default([])
    .describe("Namespaced kinds the repositories may not manage (default none)."),
  syncWindows: z
    .array(syncWindowSchema)
    .prefault([])
    .describe("Windows that hold every environment of the project, on top of the repository's own."),
  floors,
})
  .refine((p) => p.repositories.length + p.teams.length > 0, {
    path: ["repositories"],
    error: "covers nothing: list repositories (globs) or teams",
  })
  .describe("Which repositories may deploy where, with which kinds, windows and floors.");

export const projectsSchema = strictObject({
  projects: z
    .array(project)
    .describe("The projects, matched in order: a repository belongs to the first that covers it."),
});

export function safeParseProjects(
  data: unknown,
): { success: true; data: ProjectsFile } | { success: false; issues: SchemaIssue[] } {
  const result = projectsSchema.safeParse(data, { error: configErrorMap });
  const issues: SchemaIssue[] = result.success ? [] : schemaIssuesOf(result.error);
  const list = (data as { projects?: unknown } | null)?.projects;
  if (Array.isArray(list)) {
    const first = new Map<string, number>();
    for (const [index, p] of list.entries()) {
      const name = (p as { name?: unknown } | null)?.name;
      if (typeof name !== "string") continue;
      const earlier = first.get(name);
      if (earlier === undefined) first.set(name, index);
      else
        issues.push({
          path: ["projects", index, "name"],
          code: "custom",
          message: `duplicate project name ${JSON.stringify(name)} (also projects[${earlier}].name)`,
        });
    }
  }
  if (issues.length > 0) return { success: false, issues };
  return { success: true, data: (result as { data: ProjectsFile }).data };
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type ProjectsSchemaMatchesTypes = [
  Assert<Same<z.output<typeof projectsSchema>, ProjectsFile>>,
  Assert<Same<z.output<typeof project>, Project>>,
  Assert<Same<z.output<typeof destination>, ProjectDestination>>,
  Assert<Same<z.output<typeof floors>, ProjectFloors>>,
  Assert<Same<z.output<typeof kindSchema>, KindRule>>,
];
