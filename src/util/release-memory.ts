// Gives the memory of a burst of work back to the system once the burst is over. V8 keeps the
// pages its heap grew into: Node 22 and later (V8 12+) put every page a GC frees into a pool for
// reuse, and only a memory-reducing GC empties it. V8 schedules those itself when the process is
// idle, except that it judges idleness by the allocation rate of the last GCs, and an idle
// process runs no GC to update it: after the initial sync of 10,000 objects a controller on
// Node 24 kept 300 MB of empty pages for good (docs/benchmarks-log.md, controller memory). One
// memory-reducing GC when the burst ends (tens of milliseconds, once) returns them.
//
// It needs `gc` exposed (`--expose-gc`, which the image's NODE_OPTIONS sets); without it this does
// nothing and the process behaves as before.

type Gc = (options?: { type?: string; execution?: string; flavor?: string }) => unknown;

export interface MemoryRelease {
  at: Date;
  ms: number;
  rssBefore: number;
  rssAfter: number;
}

let last: MemoryRelease | undefined;

/** The last release, for the benchmark and the logs. */
export function lastMemoryRelease(): MemoryRelease | undefined {
  return last;
}

/** V8 12+ (Node 22+) pools freed pages; V8 11 (Node 20) unmaps them in its own GCs, so has nothing to give back. */
export const V8_POOLS_PAGES = Number(process.versions.v8.split(".")[0]) >= 12;

/**
 * Runs one memory-reducing GC now (the "last resort" flavor: the one that empties the page pool);
 * undefined when gc is not exposed or V8 keeps no pool.
 */
export function releaseMemory(): MemoryRelease | undefined {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function" || !V8_POOLS_PAGES) return undefined;
  const rssBefore = process.memoryUsage.rss();
  const start = performance.now();
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  last = { at: new Date(), ms: performance.now() - start, rssBefore, rssAfter: process.memoryUsage.rss() };
  return last;
}
