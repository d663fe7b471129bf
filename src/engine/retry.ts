// Retrying a sync per the environment's retry policy (Argo CD's: wait = duration x factor^n,
// capped at maxDuration). As in Argo CD, every failed sync is retried (a 422 from an admission
// webhook, a failed hook, a health deadline): what failed may be fixed by the cluster meanwhile.
// Refusals by syncward's own guards and render errors are not: they would fail the same way.
// Each attempt calls `attempt` afresh; the caller decides which revision it syncs.
import pRetry, { AbortError } from "p-retry";
import type { RetryPolicy } from "../config/types.ts";
import { KubeApiError, KubeConnectionError } from "../kube/errors.ts";
import { errorMessage, outcomeWithoutWork } from "./resource-results.ts";
import type { SyncOutcome } from "./types.ts";

class RetryableOutcome extends Error {
  constructor(readonly outcome: SyncOutcome) {
    super(outcome.message);
  }
}

export function backoffDelay(policy: RetryPolicy, retry: number): number {
  const { duration, factor, maxDuration } = policy.backoff;
  return Math.min(duration * factor ** retry, maxDuration);
}

/**
 * Whether an error thrown during an attempt is worth another one: the API server's transient
 * answers (a schema error's 500 is not), and any other error with an HTTP status of 5xx, 429 or
 * 408 (GitHub, say) or that calls itself `retryable`.
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof KubeApiError || err instanceof KubeConnectionError) return err.transient;
  const { status, retryable } = (err ?? {}) as { status?: unknown; retryable?: unknown };
  if (retryable === true) return true;
  return typeof status === "number" && (status >= 500 || status === 429 || status === 408);
}

export interface RetryHooks {
  /** Called before waiting for retry `n` (1-based) with the outcome that failed. */
  onRetry?: (n: number, outcome: SyncOutcome, delayMs: number) => void;
  signal?: AbortSignal;
  /** What an attempt that threw was about: the revision asked for, and whether it was a dry run. */
  revision?: string;
  dryRun?: boolean;
}

export async function syncWithRetry(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<SyncOutcome>,
  hooks: RetryHooks = {},
): Promise<SyncOutcome & { attempts: number }> {
  let attempts = 0;
  let last: SyncOutcome | undefined;
  let stoppedMidAttempt = false;
  const retries = policy.limit < 0 ? Number.POSITIVE_INFINITY : policy.limit;
  try {
    const outcome = await pRetry(
      async () => {
        attempts++;
        let outcome: SyncOutcome;
        let thrown = false;
        try {
          outcome = await attempt(attempts);
        } catch (err) {
          thrown = true;
          if (hooks.signal?.aborted) throw err;
          // An error (a GitHub call, reading the branch) is an outcome like any other: a transient
          // one is retried and listed among the retried attempts, any other fails at once.
          outcome = {
            ...outcomeWithoutWork(hooks.revision ?? "", "Failed", errorMessage(err), hooks.dryRun),
            retryable: isRetryableError(err),
          };
        }
        last = outcome;
        // Stopped while it ran (SIGTERM, a lost lease): what it wrote is recorded, no retry here.
        if (hooks.signal?.aborted) {
          stoppedMidAttempt = true;
          throw new AbortError(outcome.message);
        }
        // A sync that ran and failed is retried whatever the cause; an error around it (reading
        // the branch, GitHub) only when it is transient.
        if (outcome.phase === "Failed" && (outcome.retryable || !thrown)) throw new RetryableOutcome(outcome);
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
    // Stopped (say, the lease was lost) between attempts: no outcome to record, whoever runs next
    // decides. Stopped during one: its outcome (the writes it made, where it stopped) is recorded.
    if (hooks.signal?.aborted) {
      if (stoppedMidAttempt && last) return { ...last, attempts };
      throw err;
    }
    if (last) {
      const exhausted = attempts > 1;
      return {
        ...last,
        message: exhausted ? `${last.message} (gave up after ${attempts} attempts)` : last.message,
        attempts,
      };
    }
    throw err;
  }
}
