// What the reconciler tells the world. The GitHub layer, the CLI, metrics and logs subscribe;
// the reconciler knows none of them.
import type { RevertedChange } from "../engine/revert/trail.ts";
import type { SyncOutcome } from "../engine/sync.ts";
import type { AutoRollbackNote, HistoryEntry, Trigger } from "../state/types.ts";

export interface DriftFight {
  /** `deployment.apps/web in payments-dev` */
  object: string;
  key: string;
  fields: string[];
  /** Field managers that keep changing the fields (from managedFields). */
  managers: string[];
  heals: number;
  windowMinutes: number;
  backoffMs: number;
  ignoreSnippet: string;
}

interface Base {
  instance: string;
  env: string;
  revision: string;
}

export type ReconcilerEvent =
  | (Base & { type: "synced"; trigger: Trigger; actor: string; outcome: SyncOutcome; entry: HistoryEntry })
  | (Base & {
      type: "selfHealed";
      drifted: string[];
      outcome: SyncOutcome;
      entry: HistoryEntry;
      /** What was reverted, who had changed it, and which changes matter for security. */
      reverted?: RevertedChange[];
    })
  | (Base & { type: "driftFight"; fight: DriftFight })
  | (Base & { type: "outOfSync"; drifted: string[]; requiresPruning: string[]; reason: string })
  | (Base & {
      type: "renderError";
      message: string;
      problems: Array<{ file?: string; line?: number; message: string }>;
    })
  | (Base & { type: "stuck"; reason: string })
  /** The destination resolves to no cluster, or its cluster cannot be reached: nothing was read or applied. */
  | (Base & { type: "clusterUnavailable"; message: string })
  /** The gate refused a person's request (a freeze, a closed window, an unsigned commit, missing checks). */
  | (Base & { type: "refused"; trigger: Trigger; actor: string; outcome: SyncOutcome })
  /** A new revision renders what is deployed: it became the deployed one without a sync or an approval. */
  | (Base & { type: "unchanged"; entry: HistoryEntry })
  /** The loop holds `revision` (a window, required checks, a promotion's upstreams, a rollback's pin). */
  | (Base & { type: "waiting"; reason: string; until?: string; pinned?: boolean })
  | (Base & {
      type: "awaitingApproval";
      trigger: Trigger;
      actor: string;
      approvals: string[];
      needed: number;
      /** Why it waits, in words: approvals so far, lapsed ones, a config change held to the old rule. */
      reason?: string;
    })
  | (Base & {
      type: "syncStarted";
      trigger: Trigger;
      actor: string;
      changes: number;
      /** What the sync will do, kubectl-style (`deployment.apps/web configure`), at most 50. */
      planned?: string[];
    })
  | (Base & { type: "syncProgress"; wave: number; objects: number })
  | (Base & { type: "orphans"; orphans: Array<{ object: string; risk?: string }> })
  /**
   * `revision` (a release) stayed bad for rollback.onDegraded: rolled back to `to` (the rollback's
   * sync `outcome`), or not, and why (`refused`).
   */
  | (Base & {
      type: "autoRollback";
      to?: string;
      note?: AutoRollbackNote;
      outcome?: SyncOutcome;
      refused?: string;
    });

export type Emit = (event: ReconcilerEvent) => void;
