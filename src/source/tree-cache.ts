// A directory of trees keyed by commit SHA. A tree is written into a temporary directory beside its final
// place and renamed into `<cacheDir>/<sha>` in one step, so no reader (another caller, another process,
// the next start after a crash) ever sees half a tree. A SHA names immutable content: once present, reuse.

import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SourceError } from "./errors.ts";
import { type CacheLimits, cacheLimitsFromEnv } from "./limits.ts";
import { enforceTreeBudget, META_DIR, treeBytes } from "./tree-cache-budget.ts";

const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isFullSha(text: string): boolean {
  return FULL_SHA.test(text);
}

/** Trees are cached by SHA only; a branch or tag name would be a moving target. */
export function assertFullSha(sha: string): void {
  if (!isFullSha(sha)) {
    throw new SourceError(`expected a full commit SHA (40 hex digits), got '${sha}'`);
  }
}

const inFlight = new Map<string, Promise<string>>();

/** A temporary tree older than this was left by a crashed process (extraction takes seconds). */
const STALE_AFTER_MS = 60 * 60 * 1000;

async function removeStale(cacheDir: string, prefix: string): Promise<void> {
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const path = join(cacheDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_AFTER_MS) await rm(path, { recursive: true, force: true });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Returns `<cacheDir>/<sha>`, creating it with `fill` when absent. `fill` receives an empty temporary
 * directory on the same file system and returns the directory (that one or one inside it) holding the tree.
 */
export function cachedTree(
  cacheDir: string,
  sha: string,
  fill: (tmpDir: string) => Promise<string>,
  owner = "",
  limits: CacheLimits = cacheLimitsFromEnv(),
): Promise<string> {
  assertFullSha(sha);
  const finalDir = resolve(cacheDir, sha);
  const pending = inFlight.get(finalDir);
  if (pending) return pending;
  const work = materialize(cacheDir, finalDir, sha, fill, owner, limits).finally(() =>
    inFlight.delete(finalDir),
  );
  inFlight.set(finalDir, work);
  return work;
}

async function materialize(
  cacheDir: string,
  finalDir: string,
  sha: string,
  fill: (tmpDir: string) => Promise<string>,
  owner: string,
  limits: CacheLimits,
): Promise<string> {
  const meta = join(cacheDir, META_DIR, `${sha}.json`);
  if (await isDirectory(finalDir)) {
    // Used now: the last to be evicted.
    const now = new Date();
    const touched = await utimes(meta, now, now).then(
      () => true,
      () => false,
    );
    // A tree cached without its record (by an earlier version) is measured now, so that it counts
    // against the budget and can be evicted like any other.
    if (!touched) {
      await mkdir(join(cacheDir, META_DIR), { recursive: true });
      await writeFile(meta, JSON.stringify({ owner, bytes: await treeBytes(finalDir) }));
      await enforceTreeBudget(cacheDir, { sha, owner }, limits);
    }
    return finalDir;
  }
  await mkdir(cacheDir, { recursive: true });
  const prefix = `.tmp-${sha.slice(0, 12)}-`;
  await removeStale(cacheDir, prefix);
  const tmpDir = await mkdtemp(join(cacheDir, prefix));
  try {
    const treeDir = await fill(tmpDir);
    await chmod(treeDir, 0o755); // mkdtemp makes it 0700
    const bytes = await treeBytes(treeDir);
    await mkdir(join(cacheDir, META_DIR), { recursive: true });
    await writeFile(meta, JSON.stringify({ owner, bytes }));
    try {
      await rename(treeDir, finalDir);
    } catch (err) {
      // Another process finished the same SHA first: its tree is identical, keep it.
      const code = (err as NodeJS.ErrnoException).code;
      if ((code === "ENOTEMPTY" || code === "EEXIST") && (await isDirectory(finalDir))) return finalDir;
      throw err;
    }
    await enforceTreeBudget(cacheDir, { sha, owner }, limits);
    return finalDir;
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
}
