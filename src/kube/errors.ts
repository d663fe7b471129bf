// Errors from the API server, classified so the engine can tell "try again" from "stop".

export class KubeApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }

  /** 5xx, 429 and 408 are worth retrying; 4xx (invalid, forbidden, conflict on apply) are not. */
  get transient(): boolean {
    // Server-side apply answers 500 for a manifest that does not fit the schema (an unknown
    // field): no retry will ever fix that, so it fails at once like a 422.
    if (
      this.status === 500 &&
      /failed to create typed patch object|field not declared in schema/.test(this.message)
    ) {
      return false;
    }
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }

  get immutableField(): boolean {
    return this.status === 422 && /field is immutable|immutable/i.test(this.message);
  }
}

/** Network-level failures (connection refused or reset, timeouts) before any HTTP answer. */
export class KubeConnectionError extends Error {
  readonly transient = true;
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "KubeConnectionError";
  }
}

export function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError || err instanceof KubeConnectionError) return err.transient;
  return false;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}
