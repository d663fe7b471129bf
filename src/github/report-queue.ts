// Reports on their way to GitHub. Each lane (an environment) sends one report at a time, in
// order, so deployment statuses arrive in the order things happened. A report that GitHub could
// not take because it was down or limiting us is kept and sent again: when any later report
// goes through (unless GitHub named a time to wait: a rate limit), or when a backoff timer fires. While GitHub is away, reports coalesce: a newer
// one for the same key (environment and commit) replaces the one waiting, and each lane keeps
// at most `laneCapacity`, so an outage of any length costs bounded memory. Nothing here ever
// waits on the reconciler or makes it wait.

export interface ReportQueueOptions<T> {
  send(item: T): Promise<void>;
  /** Which lane an item travels in and what it replaces there. */
  laneOf(item: T): string;
  keyOf(item: T): string;
  /** A failure worth trying again later; any other failure drops the item. */
  transient(err: unknown): boolean;
  /** How long the receiver asked us to wait after this failure, if it said (ms). */
  waitMs?(err: unknown): number | undefined;
  onDropped(item: T, why: string, err?: unknown): void;
  /** First and longest wait before sending again after GitHub failed (ms). */
  retryMs?: { initial: number; max: number };
  laneCapacity?: number;
}

interface Lane<T> {
  waiting: Map<string, T>;
  sending: boolean;
}

export class ReportQueue<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private paused = false;
  /** When the current pause ends (ms since the epoch). */
  private wakeAt = 0;
  /** Until when GitHub asked us not to send (a rate limit); no other answer lifts that pause. */
  private resumeAt: number | undefined;
  private closed = false;
  private delay: number;
  private timer: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  private readonly retry: { initial: number; max: number };
  private readonly capacity: number;

  constructor(private readonly o: ReportQueueOptions<T>) {
    this.retry = o.retryMs ?? { initial: 5_000, max: 300_000 };
    this.capacity = o.laneCapacity ?? 50;
    this.delay = this.retry.initial;
  }

  push(item: T): void {
    if (this.closed) return;
    const lane = this.lane(this.o.laneOf(item));
    const key = this.o.keyOf(item);
    lane.waiting.delete(key);
    lane.waiting.set(key, item);
    this.trim(lane);
    this.drain(lane);
  }

  private trim(lane: Lane<T>): void {
    while (lane.waiting.size > this.capacity) {
      const [oldestKey, oldest] = lane.waiting.entries().next().value as [string, T];
      lane.waiting.delete(oldestKey);
      this.o.onDropped(oldest, `more than ${this.capacity} reports waiting for GitHub`);
    }
  }

  /** Reports waiting to be sent (those waiting for GitHub to come back included). */
  get waiting(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.waiting.size + (lane.sending ? 1 : 0);
    return n;
  }

  /** True while reports wait for GitHub to answer again. */
  get backingOff(): boolean {
    return this.paused;
  }

  /**
   * Resolves when nothing is being sent and nothing waits except reports held back until GitHub
   * answers again (so shutdown never hangs on an outage).
   */
  idle(): Promise<void> {
    if (this.settled()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops sending; what still waits is dropped with the process. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const lane of this.lanes.values()) lane.waiting.clear();
    this.notify();
  }

  private lane(name: string): Lane<T> {
    let lane = this.lanes.get(name);
    if (!lane) {
      lane = { waiting: new Map(), sending: false };
      this.lanes.set(name, lane);
    }
    return lane;
  }

  private settled(): boolean {
    for (const lane of this.lanes.values()) {
      if (lane.sending || (lane.waiting.size > 0 && !this.paused && !this.closed)) return false;
    }
    return true;
  }

  private notify(): void {
    if (!this.settled()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private drain(lane: Lane<T>): void {
    const next = lane.waiting.entries().next();
    if (lane.sending || this.paused || this.closed || next.done) {
      this.notify();
      return;
    }
    const [key, item] = next.value;
    lane.waiting.delete(key);
    lane.sending = true;
    void this.o.send(item).then(
      () => {
        lane.sending = false;
        this.answered();
        this.drain(lane);
      },
      (err: unknown) => {
        lane.sending = false;
        if (this.closed) {
          this.notify();
          return;
        }
        if (!this.o.transient(err)) {
          this.o.onDropped(item, "it failed for good", err);
          this.drain(lane);
          return;
        }
        // Back at the front of its lane, unless a newer report for the same key replaced it.
        if (!lane.waiting.has(key)) {
          lane.waiting = new Map([[key, item], ...lane.waiting]);
          this.trim(lane);
        }
        this.backOff(this.o.waitMs?.(err));
        this.notify();
      },
    );
  }

  /**
   * GitHub took a report: whatever waited for it goes now. Another lane's success only says
   * GitHub is back from an outage, not that a rate limit it named has passed: that pause holds
   * until `resumeAt`.
   */
  private answered(): void {
    this.delay = this.retry.initial;
    if (!this.paused) return;
    if (this.resumeAt !== undefined && Date.now() < this.resumeAt) return;
    this.resume();
  }

  /**
   * Pauses every lane: our own doubling delay, or longer when GitHub named a time (a rate limit).
   * A rate limit met while already paused makes the pause last at least as long as it asks.
   */
  private backOff(asked: number | undefined): void {
    const now = Date.now();
    if (asked !== undefined) this.resumeAt = Math.max(this.resumeAt ?? 0, now + asked);
    if (this.paused && (this.resumeAt ?? 0) <= this.wakeAt) return;
    const until = Math.max(this.paused ? this.wakeAt : now + this.delay, this.resumeAt ?? 0);
    if (!this.paused) this.delay = Math.min(this.delay * 2, this.retry.max);
    this.paused = true;
    this.wakeAt = until;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.resume(), until - now);
    this.timer.unref();
  }

  private resume(): void {
    this.paused = false;
    this.resumeAt = undefined;
    clearTimeout(this.timer);
    for (const lane of this.lanes.values()) this.drain(lane);
  }
}
