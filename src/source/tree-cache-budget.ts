// The tree cache holds at most SYNCWARD_TREE_CACHE_BYTES, and one repository at most
// SYNCWARD_TREE_CACHE_REPO_BYTES of it: after a new tree, the repository's own least recently used
// trees go first until it is within its share (it may lose a tree it is rendering: it only hurts
// itself); then, while the whole cache is over, the least recently used tree of the repository that
// holds the most, skipping trees used in the last minutes (another repository's render may be reading
// them). A tree leaves by rename first, so no reader ever sees half of one.

import type { Dirent } from "node:fs";
import { lstat, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CacheLimits } from "./limits.ts";

export const META_DIR = ".meta";
/** A tree used this recently is not evicted for another repository's sake. */
export const IN_USE_MS = 10 * 60 * 1000;

interface Entry {
  sha: string;
  owner: string;
  bytes: number;
  usedAt: number;
}

/** Bytes of the files below `dir` (links and folders count nothing). */
export async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) total += await treeBytes(path);
    else if (e.isFile()) total += (await lstat(path)).size;
  }
  return total;
}

async function entriesOf(cacheDir: string): Promise<Entry[]> {
  const dir = join(cacheDir, META_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: Entry[] = [];
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    const path = join(dir, name);
    const [text, info] = await Promise.all([
      readFile(path, "utf8").catch(() => ""),
      stat(path).catch(() => undefined),
    ]);
    try {
      const meta = JSON.parse(text) as { owner?: unknown; bytes?: unknown };
      if (info && typeof meta.bytes === "number")
        out.push({
          sha: name.slice(0, -5),
          owner: typeof meta.owner === "string" ? meta.owner : "",
          bytes: meta.bytes,
          usedAt: info.mtimeMs,
        });
    } catch {
      // unreadable: left to a later pass
    }
  }
  return out.sort((a, b) => a.usedAt - b.usedAt);
}

async function evict(cacheDir: string, entry: Entry): Promise<void> {
  const gone = join(cacheDir, `.evicted-${entry.sha.slice(0, 12)}-${process.pid}-${Date.now()}`);
  await rename(join(cacheDir, entry.sha), gone).catch(() => undefined);
  await rm(join(cacheDir, META_DIR, `${entry.sha}.json`), { force: true });
  await rm(gone, { recursive: true, force: true });
}

/** Which trees to evict (oldest first), so `fresh`'s owner is within its share and the cache within its budget. */
export function planEviction(
  entries: Entry[],
  fresh: { sha: string; owner: string },
  limits: CacheLimits,
  now: number,
): Entry[] {
  const kept = entries.filter((e) => e.sha !== fresh.sha);
  const victims: Entry[] = [];
  const bytesOf = (owner?: string) =>
    [...kept, ...entries.filter((e) => e.sha === fresh.sha)]
      .filter((e) => !victims.includes(e) && (owner === undefined || e.owner === owner))
      .reduce((sum, e) => sum + e.bytes, 0);
  for (const e of kept)
    if (e.owner === fresh.owner && bytesOf(fresh.owner) > limits.treeCacheRepoBytes) victims.push(e);
  while (bytesOf() > limits.treeCacheBytes) {
    const candidates = kept.filter((e) => !victims.includes(e) && now - e.usedAt > IN_USE_MS);
    if (candidates.length === 0) break; // every other tree is being read: over budget until they age
    const holders = new Map<string, number>();
    for (const e of candidates) holders.set(e.owner, bytesOf(e.owner));
    const biggest = [...holders.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    const victim = candidates.find((e) => e.owner === biggest);
    if (!victim) break;
    victims.push(victim);
  }
  return victims;
}

let queue: Promise<void> = Promise.resolve();

/** Evicts what `planEviction` says, one enforcement at a time in this process. */
export function enforceTreeBudget(
  cacheDir: string,
  fresh: { sha: string; owner: string },
  limits: CacheLimits,
): Promise<void> {
  const run = queue.then(async () => {
    for (const victim of planEviction(await entriesOf(cacheDir), fresh, limits, Date.now()))
      await evict(cacheDir, victim);
  });
  queue = run.catch(() => undefined);
  return run;
}
