// The operator's projects: which repositories may deploy where, with which kinds, windows and
// floors. Declared outside every repository (the ConfigMap `syncward-projects` for the app, a file
// for the CLI and controller); src/projects/schema.ts is the source of truth for this shape.
import type { SyncWindow } from "../config/types.ts";

export interface ProjectsFile {
  projects: Project[];
}

export interface Project {
  name: string;
  description?: string;
  /** `owner/name` globs (`*`, `?`), case-insensitive as GitHub's names are. */
  repositories: string[];
  /** `org/team-slug`: every repository the team has access to belongs to the project. */
  teams: string[];
  destinations: ProjectDestination[];
  /** Cluster-scoped kinds a repository of the project may manage (Argo CD's field); `*` any. */
  clusterResourceWhitelist: KindRule[];
  /** Namespaced kinds no repository of the project may manage (Argo CD's field); `*` any. */
  namespaceResourceBlacklist: KindRule[];
  /** Windows every environment of the project is held by, on top of its own. */
  syncWindows: SyncWindow[];
  floors: ProjectFloors;
}

export interface ProjectDestination {
  /** kubeconfig context glob; absent (and not inCluster): any cluster. */
  context?: string;
  inCluster?: boolean;
  /** Cluster name glob (registry or kubeconfig context): the same names as `context`. */
  cluster?: string;
  /** Namespace glob; a leading `!` denies (Argo CD's negation). */
  namespace: string;
  /** ServiceAccount every write to this destination impersonates: `NAME` (in the namespace) or `NAMESPACE:NAME`. */
  serviceAccount?: string;
}

export interface KindRule {
  group: string;
  kind: string;
}

export interface ProjectFloors {
  /** Approvals every environment marked `production: true` needs at least. */
  productionApprovals?: number;
  requireSignedCommits?: boolean;
  /** "never": no preview of a fork's pull request, whatever the operator's default. */
  forkPreviews?: "never";
}
