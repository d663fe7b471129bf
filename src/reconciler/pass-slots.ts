// How many environment passes of one process run at once. A pass renders its revision, reads the
// live objects and plans, and all of that is garbage once the pass ends; when a process starts
// (or a config push nudges every environment) with 100 environments all passing at once, each
// pass lives a hundred times longer, everything it allocated survives into V8's old generation,
// and the heap peaked at 200 MB for 10,000 ConfigMaps (docs/benchmarks-log.md, controller memory). With
// a few passes at a time the same work is done in the same time (the API server is the limit),
// and the garbage dies young.
//
// A slot is a bound on memory, not a lock: a pass that holds one longer than `holdMs` (waiting
// for a rollout to become healthy, say) gives it back and goes on, so a slow environment never
// keeps the others from self-healing.
//
// When a burst of passes is over (the slots idle after many passes), the process gives the memory
// the burst grew into back to the system (util/release-memory.ts).
import { releaseMemory } from "../util/release-memory.ts";

/** Operator setting: passes at once per process. */
export const CONCURRENT_PASSES_VARIABLE = "SYNCWARD_CONCURRENT_PASSES";
export const DEFAULT_CONCURRENT_PASSES = 8;
/** A pass that runs longer than this stops counting against the limit. */
export const DEFAULT_PASS_HOLD_MS = 15_000;

/** What to do once a burst is over: at least `minPasses` passes, then `delayMs` with none running. */
export interface AfterBurst {
  minPasses: number;
  delayMs: number;
  run: () => void;
}

export class PassSlots {
  private running = 0;
  private readonly queue: Array<() => void> = [];
  /** Passes since the last burst was over. */
  private passes = 0;
  private burstTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly limit: number,
    private readonly holdMs = DEFAULT_PASS_HOLD_MS,
    private readonly afterBurst?: AfterBurst,
  ) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`pass slots: limit must be a positive integer, got ${limit}`);
  }

  /** Passes holding a slot now. */
  get active(): number {
    return this.running;
  }

  /** Passes waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Resolves with the slot's release (calling it again does nothing) once a slot is free, or at
   * once with a release that does nothing when `signal` aborts first (a stopped environment does
   * not wait its turn to find out it has nothing to do).
   */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return () => undefined;
    this.passes++;
    clearTimeout(this.burstTimer);
    if (this.running < this.limit) this.running++;
    else {
      // A release hands its slot straight to the first in line, so `running` stays as it is.
      const granted = await new Promise<boolean>((resolve) => {
        const turn = () => {
          signal?.removeEventListener("abort", give);
          resolve(true);
        };
        const give = () => {
          const at = this.queue.indexOf(turn);
          if (at >= 0) this.queue.splice(at, 1);
          resolve(false);
        };
        this.queue.push(turn);
        signal?.addEventListener("abort", give, { once: true });
      });
      if (!granted) return () => undefined;
    }
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.queue.shift();
      if (next) next();
      else if (--this.running === 0) this.drained();
    };
    const timer = setTimeout(release, this.holdMs);
    timer.unref();
    return release;
  }

  private drained(): void {
    const burst = this.afterBurst;
    if (!burst || this.passes < burst.minPasses) return;
    clearTimeout(this.burstTimer);
    this.burstTimer = setTimeout(() => {
      if (this.running > 0) return;
      this.passes = 0;
      burst.run();
    }, burst.delayMs);
    this.burstTimer.unref();
  }
}

/** The limit from the operator's environment; a bad value is an error naming the variable. */
export function concurrentPassesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[CONCURRENT_PASSES_VARIABLE];
  if (raw === undefined || raw.trim() === "") return DEFAULT_CONCURRENT_PASSES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${CONCURRENT_PASSES_VARIABLE} must be a whole number of at least 1, got "${raw}"`);
  return n;
}

/** A burst: this many passes before the slots were idle again (a start, a config push to every environment). */
export const BURST_PASSES = 20;

let processSlots: PassSlots | undefined;

/**
 * The process's slots, shared by every app's environments (created on first use from the
 * environment); after a burst they give its memory back.
 */
export function processPassSlots(): PassSlots {
  processSlots ??= new PassSlots(concurrentPassesFromEnv(), DEFAULT_PASS_HOLD_MS, {
    minPasses: BURST_PASSES,
    delayMs: 1000,
    run: () => void releaseMemory(),
  });
  return processSlots;
}
