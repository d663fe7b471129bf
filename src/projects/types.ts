// The operator's projects: which repositories may deploy where, with which kinds, windows and
// floors. Declared outside every repository (the ConfigMap `syncward-projects` for the app, a file
// for the CLI and controller); src/projects/schema.ts is the source of truth for this shape.
import type { ResourceCustomizations, SyncWindow } from "../config/types.ts";

export interface ProjectsFile {
  projects: Project[];
  /** Custom health checks of every project (a project's own win for their keys). */
  resourceCustomizations?: ResourceCustomizations;
}

export interface Project {
  name: string;
  description?: string;
  /**
   * `owner/name` (pinned to the repository's id at first sight) or globs (`*`, `?`), without case
   * as GitHub's names are. A glob binds only with `properties`, or in a project confined to each
   * repository's own namespaces (match.ts).
   */
  repositories: string[];
  /** Organization custom properties a repository must carry (values only the organization edits). */
  properties: Record<string, string>;
  destinations: ProjectDestination[];
  /** Cluster-scoped kinds a repository of the project may manage (Argo CD's field); `*` any. */
  clusterResourceWhitelist: KindRule[];
  /** Namespaced kinds no repository of the project may manage (Argo CD's field); `*` any. */
  namespaceResourceBlacklist: KindRule[];
  /** Windows every environment of the project is held by, on top of its own. */
  syncWindows: SyncWindow[];
  floors: ProjectFloors;
  /** This project's custom health checks (Argo CD's `resource.customizations`). */
  resourceCustomizations?: ResourceCustomizations;
  grants: ProjectGrants;
  /** Preview environments of pull requests (absent: none). */
  previews?: ProjectPreviews;
}

/** Where and how many previews of pull requests the project's repositories may run. */
export interface ProjectPreviews {
  allowed: boolean;
  destinations: ProjectDestination[];
  resourceQuota?: { hard: Record<string, string> };
  limitRange?: { limits: Array<Record<string, unknown>> };
  maxPerRepository: number;
  maxPerInstallation: number;
}

/** Operator-held credentials a project's repositories may name (grants.ts); nothing else. */
export interface ProjectGrants {
  /** SYNCWARD_NOTIFY_* variables notify targets may sign with. */
  notifyKeys: string[];
  /** Chart repository URL prefixes whose credentials may be used. */
  chartRepositories: string[];
  /** kubeconfig context globs of clusters whose credentials may be used. */
  clusters: string[];
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
  /** The operator marks this destination production: the project's floors hold there. */
  production?: boolean;
}

export interface KindRule {
  group: string;
  kind: string;
}

export interface ProjectFloors {
  /** Approvals every production environment (the operator's or the repository's word) needs at least. */
  productionApprovals?: number;
  requireSignedCommits?: boolean;
  /** "never": no preview of a fork's pull request, whatever the operator's default. */
  forkPreviews?: "never";
  /** Every destination of the project is production. */
  production?: boolean;
  /** Checks a production revision must have passed, on top of the repository's. */
  requiredChecks?: string[];
  /** Least repository permission of a production approver (default write). */
  approverPermission?: "write" | "maintain" | "admin";
}
