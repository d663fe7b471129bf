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
import type { Project, ProjectDestination } from "./types.ts";

/** The project's floors as one source of applyFloors(), beside the operator's own. */
export function projectFloorSource(project: Project): Floor {
  return {
    source: `project ${project.name}`,
    minProductionApprovals: project.floors.productionApprovals,
    requireSignedCommits: project.floors.requireSignedCommits,
  };
}

export function narrowConfig(
  project: Project,
  config: SyncwardConfig,
  operatorFloors: readonly Floor[] = [],
): SyncwardConfig {
  return {
    ...config,
    environments: config.environments.map((env) => narrowEnvironment(project, env, operatorFloors)),
  };
}

export function narrowEnvironment(
  project: Project,
  env: EnvironmentConfig,
  operatorFloors: readonly Floor[] = [],
): EnvironmentConfig {
  const violations: string[] = [];
  const where = describeCluster(env);
  const onCluster = project.destinations.filter((d) => clusterMatches(d, env));
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
  }
  const binding: EnvironmentProject = {
    name: project.name,
    clusterResourceWhitelist: project.clusterResourceWhitelist,
    namespaceResourceBlacklist: project.namespaceResourceBlacklist,
    violations,
  };
  const account = serviceAccountFor(onCluster, env.destination.namespace);
  if (account) binding.serviceAccount = account;
  if (project.floors.forkPreviews === "never") binding.forkPreviews = "never";
  const narrowed: EnvironmentConfig = {
    ...env,
    syncWindows: [...env.syncWindows, ...project.syncWindows.map((w) => ({ ...w, project: project.name }))],
    project: binding,
  };
  return applyFloors(narrowed, [...operatorFloors, projectFloorSource(project)]);
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
