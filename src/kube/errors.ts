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

  /** Set when the request impersonated this user (a project's ServiceAccount); the message says what to grant. */
  impersonatedAs?: string;

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

  /** RBAC (or another authorizer) refused the request; admission 403s (Pod Security, quota) are not this. */
  get forbidden(): boolean {
    return this.status === 403 && RBAC_DENIAL.test(this.message);
  }

  get immutableField(): boolean {
    return this.status === 422 && /field is immutable|immutable/i.test(this.message);
  }
}

// The authorizer's wording: `User "system:serviceaccount:syncward:syncward" cannot patch resource
// "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope` (or `in the
// namespace "shop"`). The API group is empty for the core group.
const RBAC_DENIAL =
  /(?:User|user) "([^"]*)" cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: (at the cluster scope|in the namespace "[^"]*"))?/;

/**
 * A forbidden request in a few words that say what to grant: `forbidden: cannot patch
 * clusterroles.rbac.authorization.k8s.io at the cluster scope (as system:serviceaccount:...)`.
 * Undefined when `err` is not an authorization denial. The API server's message holds the user's
 * name, never a credential; nothing else of the request is repeated.
 */
export function describeForbidden(err: unknown): string | undefined {
  if (!(err instanceof KubeApiError && err.status === 403)) return undefined;
  const m = RBAC_DENIAL.exec(err.message);
  if (!m) return undefined;
  const [, user, verb, resource, group, scope] = m;
  const where = scope ? ` ${scope.replace("in the namespace", "in namespace")}` : "";
  return `forbidden: cannot ${verb} ${resource}${group ? `.${group}` : ""}${where} (as ${user})`;
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
