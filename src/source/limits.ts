// How much a render may read and produce. They protect the syncward process (its memory, and every
// other environment it serves) from one repository, so they are the operator's to set (environment
// variables, or RenderOptions), never the repository's own config.

export interface RenderLimits {
  /** Largest manifest file read, in bytes; a larger one is refused before it is read. */
  maxFileBytes: number;
  /** Most bytes one render may read from manifest files, or receive from kustomize. */
  maxRenderBytes: number;
  /** Most objects one render may produce. */
  maxObjects: number;
}

export const DEFAULT_LIMITS: RenderLimits = {
  maxFileBytes: 8 * 1024 * 1024,
  maxRenderBytes: 64 * 1024 * 1024,
  // An environment is one sync: thousands of objects in one belong in several environments (Argo CD
  // advises the same split), and a render this large is far likelier a generator gone wrong.
  maxObjects: 5_000,
};

/** The variable that sets each limit. */
export const LIMIT_VARIABLES: Record<keyof RenderLimits, string> = {
  maxFileBytes: "SYNCWARD_MAX_MANIFEST_BYTES",
  maxRenderBytes: "SYNCWARD_MAX_RENDER_BYTES",
  maxObjects: "SYNCWARD_MAX_OBJECTS",
};

/** A limit variable the operator set to something that is not a limit. */
export class LimitsError extends Error {
  override name = "LimitsError";
}

/**
 * The largest GitHub tarball downloaded, in bytes (SYNCWARD_MAX_TARBALL_BYTES, default 256 MiB): the
 * download is streamed into tar and stopped when it passes this.
 */
export const DEFAULT_MAX_TARBALL_BYTES = 256 * 1024 * 1024;
export const TARBALL_VARIABLE = "SYNCWARD_MAX_TARBALL_BYTES";

export function maxTarballBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return wholeNumber(TARBALL_VARIABLE, env[TARBALL_VARIABLE]) ?? DEFAULT_MAX_TARBALL_BYTES;
}

function wholeNumber(variable: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^[1-9]\d*$/.test(raw.trim()))
    throw new LimitsError(`${variable}=${JSON.stringify(raw)}: expected a whole number greater than 0`);
  return Number(raw.trim());
}

/** The defaults, overridden by the environment variables that are set; a malformed one is an error. */
export function limitsFromEnv(env: NodeJS.ProcessEnv = process.env): RenderLimits {
  const limits = fromEnv(DEFAULT_LIMITS, LIMIT_VARIABLES, env);
  maxTarballBytesFromEnv(env); // said at start, with the others
  treeLimitsFromEnv(env);
  cacheLimitsFromEnv(env);
  return limits;
}

/** `52428800` -> `50.0 MiB (52428800 bytes)`. */
export function describeBytes(bytes: number): string {
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = "bytes";
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return unit === "bytes" ? `${bytes} bytes` : `${value.toFixed(1)} ${unit} (${bytes} bytes)`;
}

/** The problem for a file over the per-file limit. */
export function fileTooLarge(size: number, limits: RenderLimits): string {
  return `manifest file is ${describeBytes(size)}; the limit is ${describeBytes(limits.maxFileBytes)} (${LIMIT_VARIABLES.maxFileBytes}); refused without reading it`;
}

/**
 * What one repository's tree may extract to, checked on the tar stream before a byte is written
 * (tree-limits.ts), for the GitHub tarball and local git alike.
 */
export interface TreeLimits {
  /** Bytes of all files together. */
  maxTreeBytes: number;
  /** Entries (files, folders, links). */
  maxTreeFiles: number;
  /** Path components of the deepest entry. */
  maxTreeDepth: number;
  /** Bytes of a single file. */
  maxTreeFileBytes: number;
}

// A manifests repository is a few MB; these leave room for a monorepo with docs and assets while
// keeping one tree far below the shipped 2 GiB cache volume. GitHub refuses files over 100 MiB.
export const DEFAULT_TREE_LIMITS: TreeLimits = {
  maxTreeBytes: 512 * 1024 * 1024,
  maxTreeFiles: 50_000,
  maxTreeDepth: 32,
  maxTreeFileBytes: 100 * 1024 * 1024,
};

export const TREE_LIMIT_VARIABLES: Record<keyof TreeLimits, string> = {
  maxTreeBytes: "SYNCWARD_MAX_TREE_BYTES",
  maxTreeFiles: "SYNCWARD_MAX_TREE_FILES",
  maxTreeDepth: "SYNCWARD_MAX_TREE_DEPTH",
  maxTreeFileBytes: "SYNCWARD_MAX_TREE_FILE_BYTES",
};

/** How much disk the caches may hold: all trees, one repository's trees, fetched charts. */
export interface CacheLimits {
  treeCacheBytes: number;
  treeCacheRepoBytes: number;
  helmCacheBytes: number;
}

// Fit the shipped cache volume (2 GiB emptyDir): trees 1.25 GiB, of which one repository holds at
// most 512 MiB (one largest tree), charts 256 MiB.
export const DEFAULT_CACHE_LIMITS: CacheLimits = {
  treeCacheBytes: 1280 * 1024 * 1024,
  treeCacheRepoBytes: 512 * 1024 * 1024,
  helmCacheBytes: 256 * 1024 * 1024,
};

export const CACHE_LIMIT_VARIABLES: Record<keyof CacheLimits, string> = {
  treeCacheBytes: "SYNCWARD_TREE_CACHE_BYTES",
  treeCacheRepoBytes: "SYNCWARD_TREE_CACHE_REPO_BYTES",
  helmCacheBytes: "SYNCWARD_HELM_CACHE_BYTES",
};

function fromEnv<T extends object>(
  defaults: T,
  variables: Record<keyof T, string>,
  env: NodeJS.ProcessEnv,
): T {
  const out = { ...defaults };
  for (const [key, variable] of Object.entries(variables) as Array<[keyof T, string]>)
    (out as Record<keyof T, number>)[key] = wholeNumber(variable, env[variable]) ?? (defaults[key] as number);
  return out;
}

export function treeLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): TreeLimits {
  return fromEnv(DEFAULT_TREE_LIMITS, TREE_LIMIT_VARIABLES, env);
}

export function cacheLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): CacheLimits {
  return fromEnv(DEFAULT_CACHE_LIMITS, CACHE_LIMIT_VARIABLES, env);
}
