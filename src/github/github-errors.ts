// Which GitHub failures are worth sending again later. GitHub's REST docs: a primary rate limit
// is 403/429 with `x-ratelimit-remaining: 0` (wait for `x-ratelimit-reset`); a secondary one is
// 403/429 whose message names it, usually with `retry-after`. 5xx and no answer at all are
// outages. Everything else (404, 422, a bad token) would fail the same way again.

interface ErrorLike {
  status?: unknown;
  message?: unknown;
  response?: { headers?: Record<string, unknown> };
}

export function statusOf(err: unknown): number | undefined {
  const status = (err as ErrorLike | null)?.status;
  return typeof status === "number" ? status : undefined;
}

export function isRateLimited(err: unknown): boolean {
  const status = statusOf(err);
  if (status !== 403 && status !== 429) return false;
  const e = err as ErrorLike;
  const headers = e.response?.headers ?? {};
  return (
    status === 429 ||
    String(headers["x-ratelimit-remaining"]) === "0" ||
    headers["retry-after"] !== undefined ||
    /rate limit/i.test(String(e.message ?? ""))
  );
}

/** `err` and the errors it wraps (`cause`), outermost first. */
export function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 8; e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

/**
 * True for a GitHub request that failed because GitHub was unavailable or limiting us. Octokit
 * reports a connection that never got an answer as status 500 too, so it counts. An error that
 * wraps such a failure (`cause`) counts too.
 */
export function isTransientGitHubError(err: unknown): boolean {
  return causes(err).some(isTransientAnswer);
}

function isTransientAnswer(err: unknown): boolean {
  const status = statusOf(err);
  if (status === undefined) return false;
  return status >= 500 || status === 408 || isRateLimited(err);
}

/**
 * How long GitHub asked us to wait before sending again (ms), for a rate limit: `retry-after`,
 * else until `x-ratelimit-reset` when the quota is spent, else a minute (GitHub's advice for a
 * secondary limit that names no time). Undefined for anything that is not a rate limit.
 */
export function gitHubWaitMs(err: unknown, now = Date.now()): number | undefined {
  // The innermost rate-limited answer holds GitHub's headers; a wrapper only repeats its status.
  const limited = causes(err).filter(isRateLimited).at(-1);
  if (limited === undefined) return undefined;
  const headers = (limited as ErrorLike).response?.headers ?? {};
  const retryAfter = Number(headers["retry-after"]);
  if (headers["retry-after"] !== undefined && Number.isFinite(retryAfter))
    return Math.max(0, retryAfter) * 1000;
  const reset = Number(headers["x-ratelimit-reset"]);
  if (String(headers["x-ratelimit-remaining"]) === "0" && Number.isFinite(reset))
    return Math.max(0, reset * 1000 - now) + 1000;
  return 60_000;
}

/**
 * A failure on GitHub's side that we found in an answer or wrapped around one: trying again
 * later may work. `status` is GitHub's; `retryable` says so also for a rate-limited 403, which
 * the engine's retry would otherwise take for a refusal.
 */
export class GitHubUnavailableError extends Error {
  readonly retryable = true;

  constructor(
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "GitHubUnavailableError";
  }
}
