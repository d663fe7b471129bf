// What one release carries from step to step (choose-revision, render-step, ask-gate, sync-step,
// record): who asked for it, its options, and what its attempts learnt so far, which the steps
// set as they run (each says which); the order they run in is sync-operation.ts.
import type { EnvironmentConfig } from "../../config/types.ts";
import type { SyncRequest } from "../../engine/sync.ts";
import type { RenderedSource } from "../../source/render.ts";
import type { RetriedAttempts } from "../../state/retried.ts";
import type {
  AutoRollbackNote,
  EnvironmentState,
  PromotionNote,
  RollbackNote,
  Trigger,
} from "../../state/types.ts";
import type { EnvironmentEffects } from "../effects.ts";
import type { GateDecision, WritePath } from "../gate-decision.ts";
import type { RenderSeen } from "../render-binding.ts";

export interface ReleaseOptions {
  prune: boolean;
  force?: boolean;
  dryRun?: boolean;
  overridePruneLimit?: boolean;
  allowEmpty?: boolean;
  confirmPrune?: boolean;
  /** The revision was named by the request: retries never move off it. */
  pinned?: boolean;
  onProgress?: SyncRequest["onProgress"];
  /** Started by the loop's own pass, which a stop() before this point has already ended. */
  loop?: boolean;
  /** Which write path this is, for the gate: the automated pass or a person's request. */
  path: Extract<WritePath, "automated" | "manual">;
  ignoreFreeze?: boolean;
  needsApproval?: boolean;
  /** A promotion: the upstreams' evidence, kept with the history entry. */
  promotion?: PromotionNote;
  /** Said before the outcome's message in history and the answer (a rollback: which entry, who). */
  note?: string;
  /** An automatic rollback: why, and the evidence, kept with the history entry. */
  autoRollback?: AutoRollbackNote;
  /** A person's rollback: which entry, who and why, kept with the history entry. */
  rollback?: RollbackNote;
  /**
   * Asked once, right after the gate let the release's first write through, with the approvals it
   * counted: a reason stops the release there, before it writes (an approval ending a pin removes
   * the pin here, and not before: a gate that refuses leaves it standing).
   */
  beforeFirstWrite?: (approvals: readonly string[]) => Promise<string | undefined>;
}

export interface Release {
  readonly fx: EnvironmentEffects;
  /** The environment's config as the release started. */
  readonly env: EnvironmentConfig;
  /** The revision the operation was started for. */
  readonly head: string;
  readonly trigger: Trigger;
  readonly actor: string;
  readonly opts: ReleaseOptions;
  /** Aborted when this replica stops or loses its lease; absent for a dry run. */
  readonly signal?: AbortSignal;
  /** The state as the current attempt read it. */
  state: EnvironmentState;
  /** The trigger history names: the request's, then "retry" from the second attempt on. */
  lastTrigger: Trigger;
  retried: RetriedAttempts;
  /** The last attempt could not fetch the source: not the revision's fault. */
  unfetched: boolean;
  /** What the gate said when it stopped the last attempt before its first write. */
  held?: GateDecision & { allowed: false };
  /** The render the last attempt that passed the gate applied (recorded on success). */
  digest?: RenderSeen;
  /** The rules the gate judged the revision by (the environment's own for a dry run). */
  rules: EnvironmentConfig;
  /**
   * The render the first attempt at a revision was allowed to apply: its retries apply exactly it,
   * never a fresh render of the same revision that nobody approved.
   */
  allowedRender?: { revision: string; rendered: RenderedSource };
  /** opts.beforeFirstWrite was asked and let the release write. */
  cleared?: boolean;
}

/**
 * A release about to make its first attempt, registered with the writers stop() aborts; `end`
 * unregisters it.
 */
export async function startRelease(
  fx: EnvironmentEffects,
  head: string,
  trigger: Trigger,
  actor: string,
  opts: ReleaseOptions,
): Promise<{ release: Release; end: () => void }> {
  const env = fx.o.env;
  const state = await fx.o.store.load(fx.instance);
  // A dry run writes nothing, so losing the lease does not concern it.
  const abort = opts.dryRun ? undefined : new AbortController();
  if (abort) fx.writing.add(abort);
  if (opts.loop && fx.hooks.stopped()) abort?.abort();
  const release: Release = {
    fx,
    env,
    head,
    trigger,
    actor,
    opts,
    signal: abort?.signal,
    state,
    lastTrigger: trigger,
    retried: { retried: [], omitted: 0 },
    unfetched: false,
    rules: env,
  };
  return { release, end: () => abort && fx.writing.delete(abort) };
}
