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

/** The defaults, overridden by the environment variables that are set; a malformed one is an error. */
export function limitsFromEnv(env: NodeJS.ProcessEnv = process.env): RenderLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [key, variable] of Object.entries(LIMIT_VARIABLES) as Array<[keyof RenderLimits, string]>) {
    const raw = env[variable];
    if (raw === undefined || raw === "") continue;
    if (!/^[1-9]\d*$/.test(raw.trim()))
      throw new LimitsError(`${variable}=${JSON.stringify(raw)}: expected a whole number greater than 0`);
    limits[key] = Number(raw.trim());
  }
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
