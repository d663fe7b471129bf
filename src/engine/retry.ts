// Retrying a sync per the environment's retry policy (Argo CD's: wait = duration x factor^n,
// capped at maxDuration). Only transient failures are retried; a refused or invalid sync, or a
// permanent API error (422, 403), fails at once. Each attempt calls `attempt` afresh, so the
// caller re-resolves the branch and a retry moves to the newest revision when a fix has landed.
import pRetry, { AbortError } from "p-retry";
import type { RetryPolicy } from "../config/types.ts";
import type { SyncOutcome } from "./sync.ts";

class RetryableOutcome extends Error {
  constructor(readonly outcome: SyncOutcome) {
    super(outcome.message);
  }
}

export function backoffDelay(policy: RetryPolicy, retry: number): number {
  const { duration, factor, maxDuration } = policy.backoff;
  return Math.min(duration * factor ** retry, maxDuration);
}

export interface RetryHooks {
  /** Called before waiting for retry `n` (1-based) with the outcome that failed. */
  onRetry?: (n: number, outcome: SyncOutcome, delayMs: number) => void;
  signal?: AbortSignal;
}

export async function syncWithRetry(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<SyncOutcome>,
  hooks: RetryHooks = {},
): Promise<SyncOutcome & { attempts: number }> {
  let attempts = 0;
  let last: SyncOutcome | undefined;
  const retries = policy.limit < 0 ? Number.POSITIVE_INFINITY : policy.limit;
  try {
    const outcome = await pRetry(
      async () => {
        attempts++;
        const outcome = await attempt(attempts);
        last = outcome;
        if (outcome.phase === "Failed" && outcome.retryable) throw new RetryableOutcome(outcome);
        if (outcome.phase === "Failed") throw new AbortError(outcome.message);
        return outcome;
      },
      {
        retries,
        factor: policy.backoff.factor,
        minTimeout: policy.backoff.duration,
        maxTimeout: policy.backoff.maxDuration,
        randomize: false,
        signal: hooks.signal,
        onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
          if (error instanceof RetryableOutcome && retriesLeft > 0) {
            hooks.onRetry?.(attemptNumber, error.outcome, backoffDelay(policy, attemptNumber - 1));
          }
        },
      },
    );
    return { ...outcome, attempts };
  } catch (err) {
    // Stopped (say, the lease was lost): no outcome to record, whoever runs next decides.
    if (hooks.signal?.aborted) throw err;
    if (last) {
      const exhausted = last.retryable && attempts > 1;
      return {
        ...last,
        message: exhausted ? `${last.message} (gave up after ${attempts} attempts)` : last.message,
        attempts,
      };
    }
    throw err;
  }
}
