// Where a repository's config meets its project: the repository can only narrow. Pure: (project,
// config) -> the effective config, with what reaches outside the project recorded as violations
// that fail every sync of that environment before anything is written (engine/prepare.ts).
import { applyFloors, type Floor } from "../config/floors.ts";
import {
  destinationName,
  type EnvironmentConfig,
  type EnvironmentProject,
  type SyncwardConfig,
} from "../config/types.ts";
import { globMatch, namespaceAllowed } from "./glob.ts";
import { grantViolations } from "./grants.ts";
import { destinationsFor } from "./own-namespace.ts";
import type { Project, ProjectDestination } from "./types.ts";

/** The project's floors as one source of applyFloors(), beside the operator's own. */
export function projectFloorSource(project: Project): Floor {
  return {
    source: `project ${project.name}`,
    minProductionApprovals: project.floors.productionApprovals,
    requireSignedCommits: project.floors.requireSignedCommits,
    ...(project.floors.requiredChecks ? { requiredChecks: project.floors.requiredChecks } : {}),
    ...(project.floors.approverPermission ? { approverPermission: project.floors.approverPermission } : {}),
  };
}

/** Who the config is narrowed for: the repository's name (for `{repo}`) and the other projects. */
export interface NarrowContext {
  fullName?: string;
  others?: readonly Project[];
}

export function narrowConfig(
  project: Project,
  config: SyncwardConfig,
  operatorFloors: readonly Floor[] = [],
  context: NarrowContext = {},
): SyncwardConfig {
  return {
    ...config,
    environments: config.environments.map((env) => narrowEnvironment(project, env, operatorFloors, context)),
  };
}

export function narrowEnvironment(
  project: Project,
  env: EnvironmentConfig,
  operatorFloors: readonly Floor[] = [],
  context: NarrowContext = {},
): EnvironmentConfig {
  const violations: string[] = [];
  const where = describeCluster(env);
  const destinations = destinationsFor(project, context.fullName);
  const onCluster = destinations.filter((d) => clusterMatches(d, env));
  if (onCluster.length === 0) {
    violations.push(
      `destination ${where} is not a destination of project ${project.name} (its destinations: ${project.destinations.map(describeDestination).join(", ")})`,
    );
  } else {
    const patterns = onCluster.map((d) => d.namespace);
    for (const ns of new Set([env.destination.namespace, ...env.policy.namespaces])) {
      const field = ns === env.destination.namespace ? "destination.namespace" : "policy.namespaces";
      const decision = namespaceAllowed(patterns, ns);
      if (decision.allowed) continue;
      violations.push(
        decision.by
          ? `${field} "${ns}" is denied by project ${project.name} (destinations[].namespace: ${decision.by})`
          : `${field} "${ns}" is outside project ${project.name} (destinations[].namespace on ${where}: ${patterns.join(", ")})`,
      );
    }
    violations.push(...ownNamespaceOverlaps(project, env, context.others ?? []));
  }
  violations.push(...grantViolations(project, env));
  const binding: EnvironmentProject = {
    name: project.name,
    clusterResourceWhitelist: project.clusterResourceWhitelist,
    namespaceResourceBlacklist: project.namespaceResourceBlacklist,
    violations,
  };
  const account = serviceAccountFor(onCluster, env.destination.namespace);
  if (account) binding.serviceAccount = account;
  if (project.floors.forkPreviews === "never") binding.forkPreviews = "never";
  binding.chartCredentials = project.grants.chartRepositories;
  const narrowed: EnvironmentConfig = {
    ...env,
    syncWindows: [...env.syncWindows, ...project.syncWindows.map((w) => ({ ...w, project: project.name }))],
    project: binding,
  };
  return applyFloors(
    narrowed,
    [...operatorFloors, projectFloorSource(project)],
    productionHere(project, onCluster, env),
  );
}

/** The operator marks the environment's destination production (whether or not the project allows it). */
export function operatorProduction(project: Project, env: EnvironmentConfig, fullName?: string): boolean {
  const onCluster = destinationsFor(project, fullName).filter((d) => clusterMatches(d, env));
  return productionHere(project, onCluster, env);
}

/** The operator marks the environment's destination production: the project, or the destination that allows it. */
function productionHere(
  project: Project,
  onCluster: readonly ProjectDestination[],
  env: EnvironmentConfig,
): boolean {
  if (project.floors.production) return true;
  const ns = env.destination.namespace;
  return onCluster.some(
    (d) => d.production === true && !d.namespace.startsWith("!") && globMatch(d.namespace, ns),
  );
}

/**
 * A namespace a repository reaches only through its own name (`{repo}`) that another project
 * names outright belongs to that project: creating a repository with that name gains nothing.
 */
function ownNamespaceOverlaps(
  project: Project,
  env: EnvironmentConfig,
  others: readonly Project[],
): string[] {
  const own = project.destinations.filter((d) => d.namespace.includes("{repo}") && clusterMatches(d, env));
  if (own.length === 0) return [];
  const named = project.destinations.filter((d) => !d.namespace.includes("{repo}") && clusterMatches(d, env));
  const out: string[] = [];
  for (const ns of new Set([env.destination.namespace, ...env.policy.namespaces])) {
    if (
      namespaceAllowed(
        named.map((d) => d.namespace),
        ns,
      ).allowed
    )
      continue;
    const taken = others.find(
      (o) =>
        o.name !== project.name &&
        namespaceAllowed(
          o.destinations
            .filter((d) => !d.namespace.includes("{repo}") && clusterMatches(d, env))
            .map((d) => d.namespace),
          ns,
        ).allowed,
    );
    if (taken)
      out.push(
        `namespace "${ns}" is a destination of project ${taken.name}: a repository reaches it through its own name only where no other project names it`,
      );
  }
  return out;
}

/**
 * A destination's `cluster` or `context` glob matches the name the environment's cluster goes by
 * (destination.cluster or destination.context: one namespace of names, resolved the same way by
 * kube/clusters.ts), so a repository cannot reach a cluster its project leaves out by spelling
 * its name under the other key. A name-less destination (syncward's own cluster) matches only a
 * project destination that names no cluster.
 */
function clusterMatches(d: ProjectDestination, env: EnvironmentConfig): boolean {
  if (d.inCluster) return env.destination.inCluster;
  const glob = d.cluster ?? d.context;
  if (glob === undefined) return true;
  const name = destinationName(env.destination);
  return name !== undefined && globMatch(glob, name);
}

function describeCluster(env: EnvironmentConfig): string {
  if (env.destination.inCluster) return "in-cluster";
  const name = destinationName(env.destination);
  return name !== undefined ? `cluster "${name}"` : "syncward's own cluster";
}

function describeDestination(d: ProjectDestination): string {
  const glob = d.cluster ?? d.context;
  const cluster = d.inCluster ? "in-cluster" : glob !== undefined ? `cluster ${glob}` : "any cluster";
  return `${d.namespace} on ${cluster}`;
}

/** Argo CD's rule: the first destination whose namespace glob matches names the account. */
function serviceAccountFor(
  destinations: readonly ProjectDestination[],
  namespace: string,
): { namespace: string; name: string } | undefined {
  const d = destinations.find((x) => !x.namespace.startsWith("!") && globMatch(x.namespace, namespace));
  if (!d?.serviceAccount) return undefined;
  const colon = d.serviceAccount.indexOf(":");
  return colon < 0
    ? { namespace, name: d.serviceAccount }
    : { namespace: d.serviceAccount.slice(0, colon), name: d.serviceAccount.slice(colon + 1) };
}
