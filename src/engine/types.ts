// What the verbs of the engine (assess, apply, hooks, prune, wait) share with their caller, sync.ts.
// Kept apart so that no verb imports the module that calls it.

import type { EnvironmentConfig } from "../config/types.ts";
import type { KubeObject } from "../kube/object.ts";
import type { Assessment } from "./assess.ts";
import type { HealthChecks } from "./health/index.ts";
import type { KindRef } from "./live.ts";
import type { Plan } from "./plan.ts";
import type { SyncResult } from "./result.ts";

export interface SyncTarget {
  /** `<app>.<environment>`: names the owner in tracking annotations and labels. */
  instance: string;
  env: EnvironmentConfig;
  /** The config's compiled custom health checks (resourceCustomizations); absent: built-in rules only. */
  health?: HealthChecks;
  /** Namespaces no write may reach besides the built-in reserved ones (reserved.ts): the state namespace. */
  reservedNamespaces?: readonly string[];
}

export type ProgressEvent =
  | { type: "wave"; wave: number; objects: number }
  | { type: "applied"; key: string; action: string }
  | { type: "waiting"; wave: number; pending: string[] }
  | { type: "pruned"; key: string }
  | { type: "hook"; phase: string; name: string; outcome: string };

/**
 * When resource hooks run. `always`: every explicit sync (a person asked, an approval), even with
 * nothing changed. `ifChanged`: a new revision, only when its render changes what is deployed.
 * `never`: self-heal, which re-applies drifted objects and is not a release.
 */
export type HookMode = "always" | "ifChanged" | "never";

export interface SyncRequest {
  revision: string;
  /** Rendered from Git at `revision`, untracked and without defaults. */
  objects: KubeObject[];
  /** Prune managed objects Git no longer declares (policy's automated.prune, or `--prune`). */
  prune: boolean;
  dryRun?: boolean;
  /** Delete and recreate on immutable-field errors. */
  force?: boolean;
  overridePruneLimit?: boolean;
  /** An empty render may prune everything (a manual `--allow-empty`), automation or not. */
  allowEmpty?: boolean;
  /** Prune objects marked Prune=confirm or Delete=confirm (`--confirm-prune`). */
  confirmPrune?: boolean;
  /** Kinds this environment applied before (from its durable state). */
  inventory?: KindRef[];
  /** Where each object is declared (`path/file.yaml:12`), by keyString: named when it fails. */
  origins?: Map<string, string>;
  /** Only these keys are applied (self-heal re-applies just the drifted objects); no hooks run. */
  only?: Set<string>;
  /**
   * The assessment of this same request the caller made a moment ago (a heal right after the pass
   * that found the drift): used instead of listing and comparing the environment a second time.
   * What it read may be a few milliseconds old; the writes that follow are dry-run, and a revert
   * patch is tested on the resourceVersion it read, so a change in between fails rather than lands.
   */
  assessment?: Assessment;
  /**
   * Read each object with a GET instead of listing its kinds: for the few objects watch events
   * named (a targeted self-heal). Nothing else is read, so nothing is found to prune.
   */
  readEach?: boolean;
  /** Default `always`; `never` whenever `only` is set. */
  hooks?: HookMode;
  /**
   * The hooks fingerprint of the revision last synced (from state): with `ifChanged`, a revision
   * whose hooks differ from it runs them even when no managed object changes. Absent: not known.
   */
  hooksDigest?: string;
  /** Deadline for health between waves, ms (default: the environment's syncPolicy.healthTimeout, else 5m). */
  healthTimeoutMs?: number;
  concurrency?: number;
  onProgress?: (event: ProgressEvent) => void;
  /** Awaited after planning, before the first write, when there is something to apply or prune. */
  onPlan?: (plan: Plan) => Promise<void> | void;
  signal?: AbortSignal;
}

export interface SyncOutcome extends SyncResult {
  /** Kinds now applied, to persist as the next inventory. */
  inventory: KindRef[];
  /** Fingerprint of the revision's hooks as declared, to persist (see SyncRequest.hooksDigest). */
  hooksDigest?: string;
  /** True when the failure is transient (API unavailable, 5xx, 429, timeouts): worth a retry. */
  retryable: boolean;
}
