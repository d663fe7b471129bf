// Step 5 of a release: its history entry and what the state says after it, then the log line and
// the events the check run, deployment and notifications follow. What is recorded for each outcome
// is pure (recordedFacts, applyOutcome); the retried attempts are noted as they fail (noteRetry).
import { formatDuration } from "../../config/duration.ts";
import { guardsOf } from "../../config/stricter.ts";
import type { EnvironmentConfig } from "../../config/types.ts";
import type { SyncOutcome } from "../../engine/sync.ts";
import { addRetried } from "../../state/retried.ts";
import type { EnvironmentState } from "../../state/types.ts";
import { clearConsumedPush } from "../handed-over-push.ts";
import type { RenderSeen } from "../render-binding.ts";
import { stoppedByGate } from "./ask-gate.ts";
import type { Release } from "./release.ts";

/** What the release's outcome means for the state, besides its history entry. */
export interface RecordedFacts {
  ok: boolean;
  /** Stopped by this replica stopping or losing its lease, not by the revision. */
  interrupted: boolean;
  /** Failed for the revision's own sake: held as stuck, and a `stuck` event. */
  stuck: boolean;
}

export function recordedFacts(
  outcome: Pick<SyncOutcome, "phase">,
  r: Pick<Release, "unfetched" | "held">,
  aborted: boolean,
): RecordedFacts {
  const ok = outcome.phase === "Succeeded";
  // Stopped by this replica stopping (SIGTERM) or losing its lease: the writes made stand, the rest
  // is left to the next holder, which syncs the revision again; it is not the revision's fault.
  const interrupted = !ok && aborted;
  // A source that could not be fetched is tried again by the next pass, not held as stuck;
  // neither is a retry the gate stopped (a freeze meanwhile).
  const stuck = !ok && !r.unfetched && !interrupted && !stoppedByGate(r.held);
  return { ok, interrupted, stuck };
}

export function interruptedMessage(message: string): string {
  return `stopped at a safe point (this replica is stopping or lost its lease; the next holder syncs again): ${message}`;
}

/** The state after the release, as fx.record's mutation (history and health are fx.record's). */
export function applyOutcome(
  s: EnvironmentState,
  outcome: SyncOutcome,
  facts: RecordedFacts,
  env: EnvironmentConfig,
  digest: RenderSeen | undefined,
  now = new Date(),
): void {
  if (facts.ok) {
    s.lastSyncedRevision = outcome.revision;
    if (outcome.hooksDigest !== undefined) s.hooksDigest = outcome.hooksDigest;
    s.syncStatus = outcome.resources.some((r) => r.status === "OutOfSync") ? "OutOfSync" : "Synced";
    s.stuck = undefined;
    s.lastError = undefined;
    s.selfHeals = {};
    if (s.pendingSync?.revision === outcome.revision) s.pendingSync = undefined;
    s.pendingApprovals = s.pendingApprovals.filter((a) => a.sha !== outcome.revision);
    clearConsumedPush(s, outcome.revision);
    s.deployedRules = { revision: outcome.revision, ...guardsOf(env) };
    if (digest !== undefined) {
      s.renderedDigest = digest.digest;
      s.renderedObjects = digest.objects;
    }
  } else {
    s.syncStatus = "OutOfSync";
    if (facts.stuck)
      s.stuck = {
        revision: outcome.revision,
        reason: outcome.message,
        since: now.toISOString(),
      };
  }
}

/** A failed attempt about to be retried: kept for the history entry (`r.retried`), and logged now. */
export function noteRetry(r: Release, n: number, failed: SyncOutcome, delay: number): void {
  r.retried = addRetried(r.retried, {
    attempt: n,
    startedAt: failed.startedAt,
    finishedAt: failed.finishedAt,
    revision: failed.revision,
    message: `${failed.message} (retrying in ${formatDuration(delay)})`,
  });
  r.fx.o.log.warn(
    {
      instance: r.fx.instance,
      attempt: n,
      revision: failed.revision,
      delayMs: delay,
      error: failed.message,
    },
    "sync failed; retrying",
  );
}

export async function recordRelease<O extends SyncOutcome>(r: Release, outcome: O): Promise<O> {
  const { fx } = r;
  const env = r.env;
  const facts = recordedFacts(outcome, r, r.signal?.aborted === true);
  if (facts.interrupted) outcome.message = interruptedMessage(outcome.message);
  if (r.opts.note) outcome.message = `${r.opts.note}: ${outcome.message}`;
  const { entry } = await fx.record(
    r.lastTrigger,
    r.actor,
    outcome,
    (s) => applyOutcome(s, outcome, facts, env, r.digest),
    undefined,
    r.retried,
    {
      ...(r.opts.promotion ? { promotion: r.opts.promotion } : {}),
      ...(r.opts.autoRollback ? { autoRollback: r.opts.autoRollback } : {}),
      ...(r.opts.rollback ? { rollback: r.opts.rollback } : {}),
      // What a rollback to this entry must render again (pin.ts).
      ...(facts.ok && r.digest ? { renderDigest: r.digest.digest } : {}),
    },
  );
  fx.o.log.info(
    {
      instance: fx.instance,
      revision: outcome.revision,
      trigger: r.lastTrigger,
      result: outcome.phase,
      writes: outcome.writes,
    },
    outcome.message,
  );
  fx.o.emit({
    type: "synced",
    instance: fx.instance,
    env: env.name,
    revision: outcome.revision,
    trigger: r.lastTrigger,
    actor: r.actor,
    outcome,
    entry,
  });
  if (facts.stuck)
    fx.o.emit({
      type: "stuck",
      instance: fx.instance,
      env: env.name,
      revision: outcome.revision,
      reason: outcome.message,
    });
  return outcome;
}
