// The schema of the operator's projects document (`projects.yaml` in the ConfigMap
// `syncward-projects`, or the file of SYNCWARD_PROJECTS_FILE / --projects): the source of truth
// for src/projects/types.ts, the messages and schema/syncward-projects.schema.json. Field names
// follow Argo CD's AppProject where it has one.
import { z } from "zod";
import {
  configErrorMap,
  kindSchema,
  resourceCustomizationsSchema,
  type SchemaIssue,
  schemaIssuesOf,
  strictObject,
  syncWindowSchema,
} from "../config/schema.ts";
import type {
  KindRule,
  Project,
  ProjectDestination,
  ProjectFloors,
  ProjectGrants,
  ProjectPreviews,
  ProjectsFile,
} from "./types.ts";

const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// owner/name with `*` and `?` globs; GitHub's owner and repository characters otherwise.
const REPO_GLOB_RE = /^[A-Za-z0-9*?][A-Za-z0-9*?-]*\/[A-Za-z0-9_.*?-]+$/;
// `{repo}` stands for the repository's own name (membership.ts): a namespace named after it.
const NAMESPACE_GLOB_RE = /^!?(?:[a-z0-9*?]|\{repo\})(?:(?:[-a-z0-9*?]|\{repo\})*(?:[a-z0-9*?]|\{repo\}))?$/;
const SA_NAME = "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";
const SERVICE_ACCOUNT_RE = new RegExp(`^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?:)?${SA_NAME}$`);

// ---- Production floors: the operator's word on which destinations are production (floors.ts) ----
const productionDestinationFields = {
  production: z
    .boolean()
    .optional()
    .describe(
      "true: every environment deploying here is production, whatever the repository's production: says, and held to the project's floors.",
    ),
};
const productionFloorFields = {
  production: z
    .boolean()
    .optional()
    .describe("true: every destination of the project is production (as destinations[].production)."),
  requiredChecks: z
    .array(z.string().min(1))
    .optional()
    .describe("Checks that must have passed on a revision before it reaches a production destination."),
  approverPermission: z
    .enum(["write", "maintain", "admin"])
    .optional()
    .describe(
      "Least repository permission of any approver of a production environment (default write; listed approvers too).",
    ),
};
// ---- end production floors ----

// ---- Grants: which operator-held credentials a project's repositories may name (grants.ts) ----
const grants = strictObject({
  notifyKeys: z
    .array(
      z.string().regex(/^SYNCWARD_NOTIFY_[A-Z0-9_]+$/, { error: "must name a SYNCWARD_NOTIFY_* variable" }),
    )
    .default([])
    .describe("SYNCWARD_NOTIFY_* variables the repositories' notify targets may sign with (secretEnv)."),
  chartRepositories: z
    .array(z.string().min(1))
    .default([])
    .describe("Chart repository URL prefixes whose operator-held credentials the repositories may use."),
  clusters: z
    .array(z.string().min(1))
    .default([])
    .describe(
      "Clusters (kubeconfig context globs) whose operator-held credentials the repositories may use.",
    ),
})
  .prefault({})
  .describe("Operator-held credentials the project's repositories may name; anything else is refused.");
// ---- end grants ----

const destination = strictObject({
  namespace: z
    .string()
    .regex(NAMESPACE_GLOB_RE, {
      error: (i) =>
        `${JSON.stringify(i.input)} is not a namespace glob: lowercase letters, digits, "-", "*" and "?", with an optional leading "!" to deny`,
    })
    .describe(
      'Namespaces allowed (glob, e.g. "team-a-*"); a leading "!" denies ("!kube-*"); "{repo}" is the repository\'s own name ("{repo}", "{repo}-dev").',
    ),
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
  .extend(productionDestinationFields)
  .refine((d) => !(d.inCluster && d.context !== undefined), {
    path: ["context"],
    error: "cannot be combined with inCluster: true (choose one)",
  })
  .refine((d) => !(d.cluster !== undefined && (d.context !== undefined || d.inCluster)), {
    path: ["cluster"],
    error: "cannot be combined with context or inCluster: true (choose one)",
  })
  .describe("A cluster and namespaces the project's repositories may deploy to.");

// ---- Previews: where pull requests' live copies may run, and how many (src/projects/previews.ts) ----
const quantities = z
  .record(z.string().min(1), z.union([z.string().min(1), z.number()]).transform(String))
  .describe('Kubernetes quantities by resource name, e.g. {pods: "20", "limits.memory": "4Gi"}.');
const previews = strictObject({
  allowed: z
    .boolean()
    .default(false)
    .describe("true: the project's repositories may run previews of pull requests (default false)."),
  destinations: z
    .array(destination)
    .default([])
    .describe(
      'Where previews may run: a cluster and a namespace glob each (e.g. {cluster: dev, namespace: "*-pr-*"}); never a production destination.',
    ),
  resourceQuota: strictObject({ hard: quantities })
    .optional()
    .describe("A ResourceQuota syncward puts into every preview namespace before anything else."),
  limitRange: strictObject({
    limits: z.array(z.record(z.string(), z.unknown())).min(1, { error: "must list at least one limit" }),
  })
    .optional()
    .describe("A LimitRange syncward puts into every preview namespace (its spec: limits)."),
  maxPerRepository: z
    .int()
    .min(1)
    .max(100)
    .default(3)
    .describe("Live previews one repository may have at once; more wait in a queue (default 3)."),
  maxPerInstallation: z
    .int()
    .min(1)
    .max(1000)
    .default(20)
    .describe("Live previews of all the project's repositories of one installation at once (default 20)."),
})
  .refine((p) => !p.allowed || p.destinations.length > 0, {
    path: ["destinations"],
    error: "must list where previews may run when allowed is true",
  })
  .refine((p) => !p.destinations.some((d) => d.production), {
    path: ["destinations"],
    error: "a preview destination cannot be production: previews deploy without an approval",
  })
  .describe("Preview environments of pull requests: off unless allowed, and only where listed.");
// ---- end previews ----

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
  ...productionFloorFields,
})
  .prefault({})
  .describe("Settings no repository of the project can lower.");

// ---- Membership: only what the operator controls (src/projects/match.ts) ----
const PROPERTY_NAME_RE = /^[A-Za-z0-9_.$#-]{1,75}$/;
const membershipFields = {
  properties: z
    .record(
      z.string().regex(PROPERTY_NAME_RE, {
        error: (i) => `${JSON.stringify(i.input)} is not a custom property name`,
      }),
      z.string().min(1),
    )
    .default({})
    .describe(
      "Organization custom properties (name: value) a repository must carry, all of them. Only properties that repository admins cannot edit (values_editable_by: org_actors) are accepted.",
    ),
};
/** `teams:` is gone: a repository admin can grant any team access to their repository. */
function teamsIssue(p: unknown, index: number): SchemaIssue | undefined {
  if (p === null || typeof p !== "object" || !("teams" in p)) return undefined;
  return {
    path: ["projects", index, "teams"],
    code: "custom",
    message:
      "is no longer accepted: a repository admin can grant any team access to their repository, so team access cannot decide membership. List the repositories by name, or select them by an organization custom property (properties)",
  };
}
// ---- end membership ----

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
  ...membershipFields,
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
  grants,
  previews: previews.optional(),
  // Custom health checks: the operator's, run sandboxed (src/lua/sandbox.ts).
  resourceCustomizations: resourceCustomizationsSchema
    .optional()
    .describe(
      "This project's custom Lua health checks (Argo CD's resource.customizations); a key here wins over the document's.",
    ),
})
  .refine((p) => p.repositories.length + Object.keys(p.properties).length > 0, {
    path: ["repositories"],
    error: "covers nothing: list repositories (names or globs) or properties",
  })
  .describe("Which repositories may deploy where, with which kinds, windows and floors.");

export const projectsSchema = strictObject({
  projects: z
    .array(project)
    .describe("The projects, matched in order: a repository belongs to the first that covers it."),
  resourceCustomizations: resourceCustomizationsSchema
    .optional()
    .describe("Custom Lua health checks for every project (Argo CD's argocd-cm resource.customizations)."),
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
      const teams = teamsIssue(p, index);
      if (teams) {
        // Said once, with why, instead of strictObject's "unknown field".
        const at = issues.findIndex(
          (i) =>
            i.path.join(".") === `projects.${index}` &&
            ((i as { keys?: string[] }).keys ?? []).join() === "teams",
        );
        if (at >= 0) issues.splice(at, 1);
        issues.push(teams);
      }
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
  Assert<Same<z.output<typeof grants>, ProjectGrants>>,
  Assert<Same<z.output<typeof previews>, ProjectPreviews>>,
  Assert<Same<z.output<typeof kindSchema>, KindRule>>,
];
