// Polling with a deadline instead of fixed sleeps: the demo moves on as soon as the cluster does.

/** A step's expectation that did not hold; the message says what was expected and what was seen. */
export class StepFailure extends Error {}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `check` every `intervalMs` until it returns something other than undefined or false, and
 * returns that value with the time it took. After `timeoutMs` it throws a StepFailure naming
 * `what` and the last thing `describe` reported (or the last error).
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; last?: () => string } = {},
): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return { value, ms: Date.now() - started };
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) break;
    await sleep(opts.intervalMs ?? 200);
  }
  const seen = opts.last?.() ?? (lastError instanceof Error ? lastError.message : undefined);
  throw new StepFailure(
    `${what}: not seen within ${((opts.timeoutMs ?? 30_000) / 1000).toFixed(0)}s${seen ? ` (last seen: ${seen})` : ""}`,
  );
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
