// Where an environment deploys, as `syncward_app_info` labels it (after argocd_app_info's
// project, dest_server and namespace): names from the config and the operator's projects only,
// so the series stay as few as the environments.
import { clusterNameOf } from "../kube/clusters.ts";

export interface Placement {
  /** The operator's project the environment deploys under; undefined without projects. */
  project?: string;
  /** The destination cluster's name, as `syncward_cluster_reachable` names it. */
  cluster: string;
  /** destination.namespace */
  namespace: string;
}

interface PlacedEnvironment {
  destination: { namespace: string; cluster?: string; context?: string; inCluster?: boolean };
  project?: { name: string };
}

/**
 * The environment's placement. `ownCluster` names syncward's own cluster (its kubeconfig context),
 * where an environment that names no cluster deploys; `inCluster: true` is "in-cluster", the
 * name the cluster list and the reconciler's messages use for it.
 */
export function placementOf(env: PlacedEnvironment, ownCluster: string): Placement {
  const d = env.destination;
  return {
    ...(env.project ? { project: env.project.name } : {}),
    cluster: clusterNameOf(d, ownCluster),
    namespace: d.namespace,
  };
}
