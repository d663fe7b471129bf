// What names an app and its environments in the cluster. Every derived name (state ConfigMaps,
// tracking ids and labels, Leases, hook labels) is built from an environment's instance name, and
// the instance name from the app's identity, so two apps can share a name only if they share an
// identity:
// - a repository installed through GitHub is `gh_<repository id>`: GitHub's numeric id is unique
//   and survives a rename or a transfer, so its state and tracking carry over untouched;
// - an app run by the CLI from a checkout is `local_<hash>` of its origin remote (or, without one,
//   of the checkout's absolute path, or of the `--app` name given): no installed repository's
//   identity starts so, and two checkouts called `repo` of different repositories differ.
// The readable name (`acme/shop`) goes beside it where people read it; it decides nothing.
import { createHash } from "node:crypto";

/** Kubernetes' label value syntax (at most 63 characters, checked apart). */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const MAX_LABEL = 63;
const HASH_LENGTH = 10;

function hashOf(text: string, length = HASH_LENGTH): string {
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}

/** The identity of a repository installed through GitHub: `gh_<its numeric id>`. */
export function githubAppId(repositoryId: number): string {
  if (!Number.isSafeInteger(repositoryId) || repositoryId <= 0)
    throw new Error(`a GitHub repository id must be a positive integer, got ${repositoryId}`);
  return `gh_${repositoryId}`;
}

/**
 * A remote URL as one spelling: `https://github.com/acme/shop.git`, `git@github.com:acme/shop`
 * and `ssh://git@github.com/Acme/shop/` are all `github.com/acme/shop`. Credentials are dropped.
 */
export function normalizedRemote(url: string): string | undefined {
  const text = url.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(text);
  let host: string;
  let path: string;
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    host = scp[1] as string;
    path = scp[2] as string;
  } else {
    try {
      const u = new URL(text);
      if (!u.host) return undefined;
      host = u.hostname;
      path = u.pathname;
    } catch {
      return undefined;
    }
  }
  const clean = path
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/i, "")
    .toLowerCase();
  return clean ? `${host.toLowerCase()}/${clean}` : undefined;
}

/**
 * The identity of an app the CLI runs from a checkout, without GitHub: `local_<hash>` of the
 * `--app` name when given, else of the origin remote (two checkouts of one repository are one
 * app), else of the checkout's absolute path. Each source is tagged before hashing, so a name, a
 * remote and a path never meet.
 */
export function localAppId(o: { name?: string; remote?: string; path: string }): string {
  const remote = o.remote ? normalizedRemote(o.remote) : undefined;
  const tag = o.name !== undefined ? `app:${o.name}` : remote ? `remote:${remote}` : `path:${o.path}`;
  return `local_${hashOf(tag, 12)}`;
}

/**
 * An environment's instance name, `<app>.<environment>`: a valid label value of at most 63
 * characters. When that does not fit, the end is cut and `_<hash of the whole>` put in its
 * place; an environment name holds no `_`, so a cut name never equals an uncut one.
 */
export function instanceName(app: string, env: string): string {
  const exact = `${app}.${env}`;
  if (exact.length <= MAX_LABEL && LABEL_VALUE.test(exact)) return exact;
  const readable = exact
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, "-")
    .slice(0, MAX_LABEL - HASH_LENGTH - 1)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  return `${readable}_${hashOf(exact)}`;
}

/** Whether `instance` is one of `app`'s environments (an environment name holds no dot). */
export function isInstanceOf(app: string, instance: string): boolean {
  const prefix = `${app}.`;
  return instance.startsWith(prefix) && /^[a-z0-9_-]*$/.test(instance.slice(prefix.length));
}

// ---- the names before identities: kept only to find and move state written under them ----

/** The app name syncward gave a repository before identities: `<owner>-<repo>`. */
export function legacyAppName(owner: string, repo: string): string {
  return `${owner}-${repo}`;
}

/**
 * The instance name before identities: `<app>.<env>` lowercased, cut at 63 characters. Two
 * repositories could share one; the upgrade moves such a state to one repository only (its claim).
 */
export function legacyInstanceName(app: string, env: string): string {
  return `${app}.${env}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, "-")
    .slice(0, 63);
}
