// After a pass fails because its cluster gave no answer, the environment's next machine-made
// passes (polls, watch nudges, the cluster's own outage signals) wait: 1 s, doubling to 60 s,
// until a pass succeeds. A person's trigger (push, comment, CLI) never waits. Without it, a
// cluster that answers /version but times out every list would have every environment there
// running pass after pass, each a pass's worth of timeouts.

const FIRST_MS = 1_000;
const MAX_MS = 60_000;

export class OutageBackoff {
  private failures = 0;
  private until = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {}

  failed(): void {
    this.failures++;
    this.until = this.now() + Math.min(MAX_MS, FIRST_MS * 2 ** (this.failures - 1));
  }

  /** While backing off: schedules `retry` for when it ends (once) and returns true. */
  defer(retry: () => void): boolean {
    const wait = this.until - this.now();
    if (wait <= 0) return false;
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        retry();
      }, wait);
      this.timer.unref();
    }
    return true;
  }

  /** A pass succeeded (or the environment stopped): nothing waits any more. */
  reset(): void {
    this.failures = 0;
    this.until = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** How long the next pass would wait (tests, logs). */
  get waitMs(): number {
    return Math.max(0, this.until - this.now());
  }
}
