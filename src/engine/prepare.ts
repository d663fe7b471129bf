// Before anything is applied: every object must be a kind the cluster serves (or one whose CRD is
// in the same render), land in a namespace the environment may use, and be a cluster-scoped kind
// only when the policy lists it. All problems are collected; any problem means nothing is applied.
import type { EnvironmentConfig } from "../config/types.ts";
import type { ApiResource, KubeClient } from "../kube/client.ts";
import { groupOf, type KubeObject, keyOf, kubectlName } from "../kube/object.ts";
import { mapLimit } from "../util/map-limit.ts";
import { projectKindProblem, projectViolations } from "./project-limits.ts";
import {
  type Reserved,
  reservedDestinationProblems,
  reservedObjectProblem,
  reservedPlaces,
} from "./reserved.ts";
import { resourceOptionsOf } from "./sync-options.ts";

export class ValidationError extends Error {
  constructor(
    readonly problems: string[],
    /** How the sync's message introduces the problems. */
    readonly heading = "invalid manifests",
  ) {
    super(problems.join("\n"));
    this.name = "ValidationError";
  }
}

export interface PreparedObject {
  obj: KubeObject;
  /** Undefined when the kind is defined by a CRD in this same render and not yet served. */
  resource?: ApiResource;
  namespaced: boolean;
}

/** Custom resource kinds this render itself defines: `group/Kind` -> scope. */
function crdKinds(objects: KubeObject[]): Map<string, boolean> {
  const kinds = new Map<string, boolean>();
  for (const o of objects) {
    if (o.kind !== "CustomResourceDefinition") continue;
    const spec = (o as { spec?: { group?: string; scope?: string; names?: { kind?: string } } }).spec;
    if (spec?.group && spec.names?.kind)
      kinds.set(`${spec.group}/${spec.names.kind}`, spec.scope !== "Cluster");
  }
  return kinds;
}

export async function prepareObjects(
  client: KubeClient,
  env: EnvironmentConfig,
  objects: KubeObject[],
  reserved: Reserved = reservedPlaces(),
): Promise<PreparedObject[]> {
  // The repository's config reaches outside its project, or into a reserved place: no object
  // is even looked at.
  const violations = [...projectViolations(env), ...reservedDestinationProblems(env, reserved)];
  if (violations.length > 0) throw new ValidationError(violations, "refused by the operator's project");
  const problems: string[] = [];
  const defined = crdKinds(objects);
  const allowedNamespaces = new Set(env.policy.namespaces);
  const allowedCluster = env.policy.clusterResources;
  const prepared = await mapLimit(objects, 8, async (obj): Promise<PreparedObject | undefined> => {
    const resource = await client.resourceFor(obj.apiVersion, obj.kind);
    const group = groupOf(obj.apiVersion);
    const fromCrd = defined.get(`${group}/${obj.kind}`);
    // An operator installs this kind at run time (its Deployment registers the CRD): the object
    // waits for its wave instead of failing the sync now (SkipDryRunOnMissingResource).
    const waits =
      env.syncPolicy.syncOptions.SkipDryRunOnMissingResource === true ||
      resourceOptionsOf(obj).skipDryRunOnMissingResource === true;
    if (!resource && fromCrd === undefined && !waits) {
      problems.push(
        `${kubectlName(keyOf(obj))}: the cluster does not know kind ${obj.kind} in ${obj.apiVersion} (is its CustomResourceDefinition installed?)`,
      );
      return undefined;
    }
    // A kind not served yet is taken as namespaced, as most operators' kinds are.
    const namespaced = resource ? resource.namespaced : (fromCrd ?? true);
    const copy: KubeObject = { ...obj, metadata: { ...obj.metadata } };
    const forbidden = projectKindProblem(env, kubectlName(keyOf(obj)), group, obj.kind, namespaced);
    if (forbidden) problems.push(forbidden);
    const own = reservedObjectProblem(reserved, obj, namespaced, env.destination.namespace);
    if (own) problems.push(own);
    if (namespaced) {
      copy.metadata.namespace = obj.metadata.namespace || env.destination.namespace;
      if (!allowedNamespaces.has(copy.metadata.namespace)) {
        problems.push(
          `${kubectlName(keyOf(copy))}: namespace "${copy.metadata.namespace}" is not allowed for environment ${env.name} (policy.namespaces: ${[...allowedNamespaces].join(", ")})`,
        );
      }
    } else {
      delete copy.metadata.namespace;
      if (!allowedCluster.some((c) => c.group === group && (c.kind === obj.kind || c.kind === "*"))) {
        problems.push(
          `${kubectlName(keyOf(copy))}: cluster-scoped kind ${obj.kind} is not allowed for environment ${env.name} (add {group: "${group}", kind: ${obj.kind}} to policy.clusterResources)`,
        );
      }
    }
    return { obj: copy, resource, namespaced };
  });
  if (problems.length > 0) throw new ValidationError(problems.sort());
  return prepared.filter((p): p is PreparedObject => p !== undefined);
}
