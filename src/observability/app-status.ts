// The sync and health status of an environment as `syncward_app_info` shows it: followed from the
// reconciler's events (a pure step function, so each transition is a row in a table test) and read
// from the stored state, which every replica and the CLI write, so that any replica's gauge says
// what the store holds.
import type { Health } from "../engine/result.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import { healthAfter } from "../state/recorded-health.ts";
import type { EnvironmentState } from "../state/types.ts";

export type SyncStatusLabel = "Synced" | "OutOfSync" | "Unknown";

export interface AppStatus {
  sync: SyncStatusLabel;
  /** Argo CD's health vocabulary (Healthy, Progressing, Degraded, Suspended, Missing) or Unknown. */
  health: string;
  /** A rollback pins it (`syncward_environment_pinned`); absent: not pinned. Only the state says it. */
  pinned?: boolean;
}

const UNKNOWN: AppStatus = { sync: "Unknown", health: "Unknown" };

/**
 * The status after `event`. A completed sync says both (its phase, its resources' worst health);
 * an out-of-sync report says the sync status only; a render error makes the sync status Unknown
 * (nothing could be compared); a stuck environment is Degraded (its retries ran out). Events
 * that change neither (waiting, orphans, syncStarted, ...) keep the status.
 */
export function appStatusAfter(
  before: AppStatus | undefined,
  event: ReconcilerEvent,
  worst: (health: Array<Health | undefined>) => string | undefined,
): AppStatus {
  const current = before ?? UNKNOWN;
  switch (event.type) {
    case "synced":
    case "selfHealed": {
      const { outcome } = event;
      if (outcome.dryRun) return current;
      // Refused (frozen, outside a window) changes nothing in the cluster: the status stands.
      if (outcome.phase === "Refused") return current;
      return {
        ...current,
        sync: outcome.phase === "Succeeded" ? "Synced" : "OutOfSync",
        health: healthAfter(current.health, outcome, worst) ?? current.health,
      };
    }
    case "outOfSync":
      return { ...current, sync: "OutOfSync" };
    case "renderError":
      return { ...current, sync: "Unknown" };
    case "clusterUnavailable":
      // Nothing could be read there: neither how it compares with Git nor how it runs.
      return { ...current, sync: "Unknown", health: "Unknown" };
    case "stuck":
      return { ...current, health: "Degraded" };
    default:
      return current;
  }
}

/** The status the stored state says: a stuck environment is Degraded, as the `stuck` event makes it. */
export function statusOfState(
  state: Pick<EnvironmentState, "syncStatus" | "health" | "stuck"> & Partial<Pick<EnvironmentState, "pin">>,
): AppStatus {
  return {
    sync: state.syncStatus ?? "Unknown",
    health: state.stuck ? "Degraded" : (state.health ?? "Unknown"),
    ...(state.pin ? { pinned: true } : {}),
  };
}
