// The plain value every reporter (CLI table, check run, history, metrics) renders: what a sync
// did to each object. Built by the engine, never by parsing logs.

export type HealthStatus = "Healthy" | "Progressing" | "Degraded" | "Suspended" | "Missing" | "Unknown";

export interface Health {
  status: HealthStatus;
  message?: string;
}

export type ResourceStatus = "Synced" | "OutOfSync" | "Pruned" | "Failed" | "Skipped";

/** What happened to one object, in kubectl's words. */
export type ResourceAction =
  | "created"
  | "configured"
  | "unchanged"
  | "pruned"
  | "skipped"
  | "failed"
  | "would prune";

export interface ResourceResult {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: ResourceStatus;
  action: ResourceAction;
  health?: Health;
  /** kubectl-style: `deployment.apps/web configured`, or the reason it failed or was skipped. */
  message: string;
  /** JSON pointers of fields that differed from Git (for drift and self-heal reporting). */
  drifted?: string[];
  wave?: number;
  /** Set for a hook: an operation run during the sync, not an object syncward manages. */
  hook?: HookReport;
}

export type HookOutcome = "Succeeded" | "Failed" | "Skipped";

export interface HookReport {
  /** PreSync, Sync, PostSync or SyncFail. */
  phase: string;
  outcome: HookOutcome;
  /** The deletion policy that removed it after it finished (HookSucceeded, HookFailed). */
  deletedBy?: string;
}

export type OperationPhase = "Succeeded" | "Failed" | "Error" | "Refused";

export interface SyncResult {
  revision: string;
  phase: OperationPhase;
  /** One line a person reads first: "synced 7 objects", "render produced 0 objects; refusing to prune 7 live objects". */
  message: string;
  resources: ResourceResult[];
  startedAt: string;
  finishedAt: string;
  totals: {
    created: number;
    configured: number;
    unchanged: number;
    pruned: number;
    failed: number;
    skipped: number;
  };
  /** API writes made (applies, deletes); zero for a no-op sync. */
  writes: number;
  dryRun: boolean;
}
