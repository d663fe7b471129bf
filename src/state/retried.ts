// A sync retried forever (retry.limit -1) through a long outage would grow its history entry, and
// the state ConfigMap holding it, without bound: the entry keeps the first attempts (how it
// started) and the latest ones (how it is going), and counts those left out between.
import type { FailedAttempt } from "./types.ts";

export const RETRIED_FIRST = 3;
export const RETRIED_LAST = 10;

export interface RetriedAttempts {
  retried: FailedAttempt[];
  /** Attempts left out between the first and the latest ones. */
  omitted: number;
}

/** `log` with `attempt` added, at most RETRIED_FIRST + RETRIED_LAST attempts kept. */
export function addRetried(log: RetriedAttempts, attempt: FailedAttempt): RetriedAttempts {
  const retried = [...log.retried, attempt];
  if (retried.length <= RETRIED_FIRST + RETRIED_LAST) return { retried, omitted: log.omitted };
  retried.splice(RETRIED_FIRST, 1);
  return { retried, omitted: log.omitted + 1 };
}
