// The parsed and defaulted shape of `.github/syncward.yml`. Field names follow Argo CD's
// Application spec so that Argo CD users recognise them.
// NOTE: src/config/schema.ts is the source of truth; these types must stay what it produces
// (checked at compile time: SchemaMatchesTypes in schema.ts fails `tsc` when they drift).

export interface SyncwardConfig {
  environments: EnvironmentConfig[];
  /** Templates of live copies of an environment for pull requests (preview-schema.ts). */
  previewEnvironments?: PreviewTemplate[];
}

/** One `previewEnvironments:` entry: which environment a pull request's preview copies, and how. */
export interface PreviewTemplate {
  from: string;
  /** With {number}, {branch} and {sha7}. */
  namespace: string;
  url?: string;
  trigger: "label" | "comment" | "always";
  label: string;
  /** Milliseconds after the pull request last moved. */
  ttl: number;
  permission: "write" | "maintain" | "admin";
}

/**
 * One kind's customization, with Argo CD's key names. The operator's (projects document), never
 * a repository's; Argo CD's `health.lua.useOpenLibs` is refused (every script is sandboxed).
 */
export interface ResourceCustomization {
  /** Lua script that receives `obj` and returns `{status, message}`. */
  "health.lua"?: string;
}

export type ResourceCustomizations = Record<string, ResourceCustomization>;

export interface EnvironmentConfig {
  name: string;
  source: {
    path: string;
    branch: string;
    helm?: HelmSource;
    /** A chart from a chart repository (all three together), instead of the one at `path`. */
    chart?: string;
    repoURL?: string;
    targetRevision?: string;
  };
  destination: {
    /** A cluster by name (registry, then kubeconfig contexts); see destinationName(). */
    cluster?: string;
    /** The same as `cluster`; absent both = syncward's own cluster (or in-cluster when `inCluster`). */
    context?: string;
    inCluster: boolean;
    namespace: string;
  };
  syncPolicy: SyncPolicy;
  ignoreDifferences: IgnoreDifference[];
  /**
   * Field managers trusted for some fields, beyond Kubernetes' own controllers: (manager, paths)
   * pairs, or a bare name (trusted for replicas, labels and annotations only).
   */
  trustedManagers: Array<string | { manager: string; paths: string[] }>;
  syncWindows: SyncWindow[];
  approval?: ApprovalRule;
  /** Repository permission each PR comment command needs. */
  commands: CommandPermissions;
  /** Destination policy: namespaces objects may land in, and cluster-scoped kinds allowed at all. */
  policy: {
    namespaces: string[];
    clusterResources: Array<{ group: string; kind: string }>;
    /** Deploy only commits GitHub shows as verified (signed with a key it knows). */
    requireSignedCommits: boolean;
  };
  revisionHistoryLimit: number;
  /** Poll interval of the tracked branch, in milliseconds (default 3 minutes). */
  pollInterval: number;
  /** GitHub deployment fields. */
  production: boolean;
  environmentUrl?: string;
  /** Pull-request previews; undefined = on, except for production or approval-gated environments. */
  previews?: boolean;
  /** Outbound webhooks (CloudEvents) about this environment's syncs. */
  notify: NotifyTarget[];
  /** The operator's project this environment deploys under (src/projects): never read from the repository's file. */
  project?: EnvironmentProject;
  /** The operator's floor on this environment (src/config/floors.ts): never read from the repository's file. */
  floor?: OperatorFloor;
  /**
   * Checks that must have passed on a revision before it is deployed: their names (any source), a
   * name pinned to the GitHub App that must report it, or true for the tracked branch's required
   * status checks. Undefined: none.
   */
  requireChecks?: RequiredCheck[] | true;
  /** Deploy only commits the upstream environments have kept Healthy (promotion/); undefined: none. */
  promotion?: PromotionRule;
  /** Go back on its own from a release that stays Degraded (reconciler/auto-rollback.ts); undefined: never. */
  rollback?: RollbackRule;
  /**
   * The default-branch commit this config was read at, when the loader knows it (a push that
   * changed the config): never read from the file. Kept with the deployed rules, so an approval of
   * a later render can tell who changed the config since.
   */
  configRevision?: string;
}

/**
 * What the operator holds an environment to, whatever its config says: set where an operator
 * floor applies to a production destination (floors.ts). The repository can only add to it.
 */
export interface OperatorFloor {
  /** Where it comes from, for messages: "project payments", "SYNCWARD_MIN_PRODUCTION_APPROVALS". */
  sources: string[];
  /** The least repository permission of any approver, listed or not. */
  approverPermission: "write" | "maintain" | "admin";
}

/** `promotion`: the commits an environment may take are those its upstreams have proven. */
export interface PromotionRule {
  /** The upstream environments (names in this file), every one of which must have proven a commit. */
  after: string[];
  /** Milliseconds each upstream must have kept the commit synced and Healthy, without a break. */
  healthyFor: number;
  /** Checks that must have passed on the commit (as requireChecks' entries). */
  checks: RequiredCheck[];
}

export interface RollbackRule {
  /** Milliseconds a release may stay Degraded, or its sync failed, before it is rolled back. */
  onDegraded: number;
  /** Roll back past a release that created or changed a CRD. */
  acrossCRDChanges: boolean;
  /** Roll back past a release that ran a hook. */
  acrossHooks: boolean;
}

/** A check by name (any app's run or a commit status), or pinned to one GitHub App by its slug. */
export type RequiredCheck = string | { name: string; app: string };

/** What the operator's project imposes on one environment, after narrowing (src/projects/narrow.ts). */
export interface EnvironmentProject {
  name: string;
  /** Cluster-scoped kinds the project allows (`*` globs); an object of another kind fails the sync. */
  clusterResourceWhitelist: Array<{ group: string; kind: string }>;
  /** Namespaced kinds the project denies (`*` globs). */
  namespaceResourceBlacklist: Array<{ group: string; kind: string }>;
  /** Writes impersonate this ServiceAccount; reads stay on syncward's own identity. */
  serviceAccount?: { namespace: string; name: string };
  /** Where the repository's config reaches outside the project: every sync fails before any write. */
  violations: string[];
  /** The project's floor: pull requests from forks are never previewed. */
  forkPreviews?: "never";
  /** Chart repository URL prefixes whose operator-held credentials the project grants (projects/grants.ts). */
  chartCredentials?: string[];
}

export type NotifyEvent =
  | "sync-started"
  | "sync-succeeded"
  | "sync-failed"
  | "awaiting-approval"
  | "drift-fight"
  | "auto-rollback";

export interface NotifyTarget {
  url: string;
  events: NotifyEvent[];
  /** Name of the environment variable holding the HMAC key. */
  secretEnv?: string;
}

/** Argo CD's `source.helm`: how a chart source (a path holding Chart.yaml) is rendered. */
export interface HelmSource {
  /** Absent: the environment's name. */
  releaseName?: string;
  valueFiles: string[];
  ignoreMissingValueFiles: boolean;
  values?: string;
  valuesObject?: Record<string, unknown>;
  parameters: Array<{ name: string; value: string; forceString: boolean }>;
  fileParameters: Array<{ name: string; path: string }>;
  skipCrds: boolean;
  skipTests: boolean;
  /** Absent: destination.namespace. */
  namespace?: string;
  /** Absent: the destination cluster's version. */
  kubeVersion?: string;
  /** Absent: what the destination cluster serves. */
  apiVersions?: string[];
  passCredentials: boolean;
}

export interface SyncPolicy {
  /** Absent = manual sync only. */
  automated?: { prune: boolean; selfHeal: boolean; allowEmpty: boolean; enabled?: boolean };
  syncOptions: SyncOptions;
  retry: RetryPolicy;
  /** Labels and annotations of the namespace CreateNamespace=true creates. */
  managedNamespaceMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Beyond Argo CD: refuse a sync that would prune more than this (count, or "N%" of managed objects). */
  pruneLimit?: number | string;
  /** Beyond Argo CD: how long each wave may take to become Healthy, ms (absent: 5 minutes). */
  healthTimeout?: number;
}

export interface SyncOptions {
  CreateNamespace: boolean;
  ApplyOutOfSyncOnly: boolean;
  PruneLast: boolean;
  PrunePropagationPolicy: "foreground" | "background" | "orphan";
  RespectIgnoreDifferences: boolean;
  ServerSideApply: boolean;
  Replace: boolean;
  FailOnSharedResource: boolean;
  Validate: boolean;
  /** A custom resource whose kind the cluster does not serve yet waits for it (an operator installs the CRD). */
  SkipDryRunOnMissingResource?: boolean;
}

export interface RetryPolicy {
  /** Number of retries after the first attempt; < 0 unlimited, 0 none. */
  limit: number;
  /** Milliseconds. Wait before retry n (0-based) is duration * factor^n, capped at maxDuration. */
  backoff: { duration: number; factor: number; maxDuration: number };
  /** Retries move to the branch's newest revision (Argo CD's retry.refresh); otherwise they stay on theirs. */
  refresh?: boolean;
}

export interface IgnoreDifference {
  group: string;
  kind: string;
  name?: string;
  namespace?: string;
  jsonPointers: string[];
  jqPathExpressions: string[];
  managedFieldsManagers: string[];
}

export interface SyncWindow {
  kind: "allow" | "deny";
  schedule: string;
  /** Milliseconds. */
  duration: number;
  timeZone: string;
  manualSync: boolean;
  /** false: a deny window stops self-heal too (absent: self-heal continues inside it). */
  selfHeal?: boolean;
  /** Set on windows the operator's project adds (never read from the repository's file). */
  project?: string;
}

export type PermissionLevel = "read" | "triage" | "write" | "maintain" | "admin";

export interface CommandPermissions {
  sync: PermissionLevel;
  freeze: PermissionLevel;
  unfreeze: PermissionLevel;
  approve: PermissionLevel;
  diff: PermissionLevel;
  history: PermissionLevel;
  /** `/rollback` and `/unpin`; at least `approve` where an approval rule gates the environment. */
  rollback: PermissionLevel;
}

export interface ApprovalRule {
  users: string[];
  teams: string[];
  /** Approvals needed. */
  minimum: number;
  /** May the PR author approve their own change? Default false. */
  allowAuthor: boolean;
  /** Milliseconds after which an approval lapses (approval.expiresAfter); undefined: never. */
  expiresAfter?: number;
  /** Bots that act on their own: their contributions hide no person (approval.trustedBots). */
  trustedBots: string[];
}

/** The name an environment's destination cluster goes by (cluster or context), undefined for the default. */
export function destinationName(d: { cluster?: string; context?: string }): string | undefined {
  return d.cluster ?? d.context;
}
