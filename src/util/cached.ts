// A value computed on first use and kept for a while; a failed computation is not kept.

export class Cached<T> {
  private value: Promise<T> | undefined;
  private at = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly compute: () => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    if (!this.value || this.now() - this.at > this.ttlMs) {
      this.at = this.now();
      const pending = this.compute();
      this.value = pending;
      pending.catch(() => {
        if (this.value === pending) this.value = undefined;
      });
    }
    return this.value;
  }
}
