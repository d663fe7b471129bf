// Chart repositories a render may fetch dependencies from, and the fetching itself. Which repositories
// are allowed and their credentials are the operator's (environment variables or a mounted file), never
// the repository's: a chart in Git cannot make syncward reach a host nobody allowed.

import { createHash } from "node:crypto";
import {
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { cacheLimitsFromEnv } from "./limits.ts";
import { failureText, run } from "./run.ts";

/** Comma- or space-separated URL prefixes of the chart repositories (http(s) or oci) dependencies may come from. */
export const REPOSITORIES_VARIABLE = "SYNCWARD_HELM_REPOSITORIES";
/** A YAML/JSON file (or, in SYNCWARD_HELM_CREDENTIALS, the text itself): [{url, username, password}]. */
export const CREDENTIALS_FILE_VARIABLE = "SYNCWARD_HELM_CREDENTIALS_FILE";
export const CREDENTIALS_VARIABLE = "SYNCWARD_HELM_CREDENTIALS";
/** OCI registries (URL prefixes) spoken to over plain HTTP: a registry on loopback or a trusted network. */
export const PLAIN_HTTP_VARIABLE = "SYNCWARD_HELM_PLAIN_HTTP_REGISTRIES";

/**
 * An allowed chart repository did not serve a dependency (down, refusing the credentials, no such
 * version). Not a SourceError: the revision may be fine and the next attempt may succeed, so the
 * reconciler retries it instead of holding the revision as stuck.
 */
export class ChartFetchError extends Error {
  override readonly name = "ChartFetchError";
}

export interface RepositoryCredential {
  url: string;
  username: string;
  password: string;
}

export interface HelmRepositoryAccess {
  /** URL prefixes; a dependency's repository must start with one of them. */
  allowed: string[];
  credentials: RepositoryCredential[];
  /** Where fetched charts are kept, one archive per (repository, chart, version). */
  cacheDir: string;
  /** oci:// URL prefixes reached over plain HTTP (default none: HTTPS). */
  plainHttp?: string[];
  /** URL prefixes whose credentials the environment's project grants (absent: no projects, all). */
  credentialsGranted?: string[];
  /** Bytes the chart cache may hold (default SYNCWARD_HELM_CACHE_BYTES). */
  maxBytes?: number;
}

const normalize = (url: string) => url.trim().replace(/\/+$/, "");

/** Whether `repository` is one the operator allowed (by URL prefix, at a path boundary). */
export function repositoryAllowed(repository: string, allowed: string[]): boolean {
  const repo = normalize(repository);
  return allowed.some((prefix) => {
    const p = normalize(prefix);
    return p !== "" && (repo === p || repo.startsWith(`${p}/`));
  });
}

/** The credential for `repository`: the longest URL prefix that matches. */
export function credentialFor(
  repository: string,
  credentials: RepositoryCredential[],
): RepositoryCredential | undefined {
  return credentials
    .filter((c) => repositoryAllowed(repository, [c.url]))
    .sort((a, b) => b.url.length - a.url.length)[0];
}

/** Parses the credentials text; throws an Error naming `where` without repeating any secret. */
export function parseCredentials(text: string, where: string): RepositoryCredential[] {
  let value: unknown;
  try {
    value = parseYaml(text, { maxAliasCount: 0 });
  } catch {
    throw new Error(`${where}: not valid YAML or JSON`);
  }
  if (!Array.isArray(value)) throw new Error(`${where}: expected a list of {url, username, password}`);
  return value.map((entry, i) => {
    const e = entry as Record<string, unknown> | null;
    if (
      typeof e !== "object" ||
      e === null ||
      typeof e.url !== "string" ||
      typeof e.username !== "string" ||
      typeof e.password !== "string"
    ) {
      throw new Error(`${where}: entry ${i + 1} needs url, username and password (strings)`);
    }
    return { url: e.url, username: e.username, password: e.password };
  });
}

/** The access configured by the operator's environment. */
export async function repositoryAccessFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<HelmRepositoryAccess> {
  const list = (name: string) => (env[name] ?? "").split(/[\s,]+/).filter((s) => s !== "");
  const allowed = list(REPOSITORIES_VARIABLE);
  let credentials: RepositoryCredential[] = [];
  const file = env[CREDENTIALS_FILE_VARIABLE];
  if (file)
    credentials = parseCredentials(await readFile(file, "utf8"), `${CREDENTIALS_FILE_VARIABLE} (${file})`);
  else if (env[CREDENTIALS_VARIABLE])
    credentials = parseCredentials(env[CREDENTIALS_VARIABLE], CREDENTIALS_VARIABLE);
  const cacheDir =
    env.SYNCWARD_HELM_CACHE ??
    join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "syncward", "helm-charts");
  return { allowed, credentials, cacheDir, plainHttp: list(PLAIN_HTTP_VARIABLE) };
}

/** An environment in which helm reads no user config, no plugins and no kubeconfig: all below `home`. */
export function sandboxEnv(home: string): Record<string, string | undefined> {
  return {
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_DATA_HOME: join(home, "data"),
    HELM_PLUGINS: join(home, "plugins"),
    HELM_NO_PLUGINS: "1",
    HELM_REGISTRY_CONFIG: join(home, "registry.json"),
    HELM_REPOSITORY_CONFIG: join(home, "repositories.yaml"),
    HELM_REPOSITORY_CACHE: join(home, "repository-cache"),
    HELM_KUBECONTEXT: undefined,
    HELM_NAMESPACE: undefined,
    HELM_DEBUG: undefined,
    HELM_POST_RENDERER: undefined,
    KUBECONFIG: join(home, "no-kubeconfig"),
    HOME: home,
  };
}

export interface FetchRequest {
  helm: string;
  repository: string;
  chart: string;
  version: string;
  passCredentials: boolean;
  timeoutMs: number;
}

const inFlight = new Map<string, Promise<string>>();

/**
 * The cache entry of (repository, chart, version): a readable, sanitized name plus a digest of the exact
 * triple, so `^1.0` and `~1.0` never share an entry and a chart name cannot climb out of the cache.
 */
export function chartCacheKey(repository: string, chart: string, version: string): string {
  const digest = createHash("sha256")
    .update(`${normalize(repository)}\0${chart}\0${version}`)
    .digest("hex")
    .slice(0, 24);
  const readable = `${chart}-${version}`.replace(/[^A-Za-z0-9.+-]/g, "_").slice(0, 80);
  return `${readable}-${digest}`;
}

/**
 * The archive of `chart` `version` from `repository`: from the cache, or fetched once through helm's own
 * client (concurrent renders share one fetch) and kept. Throws an Error with helm's reason.
 */
export function fetchChart(access: HelmRepositoryAccess, req: FetchRequest): Promise<string> {
  const dir = join(access.cacheDir, chartCacheKey(req.repository, req.chart, req.version));
  let pending = inFlight.get(dir);
  if (!pending) {
    pending = cachedOrFetch(access, req, dir).finally(() => inFlight.delete(dir));
    inFlight.set(dir, pending);
  }
  return pending;
}

async function archiveIn(dir: string): Promise<string | undefined> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const tgz = names.find((n) => n.endsWith(".tgz"));
  return tgz ? join(dir, tgz) : undefined;
}

async function cachedOrFetch(access: HelmRepositoryAccess, req: FetchRequest, dir: string): Promise<string> {
  const cached = await archiveIn(dir);
  if (cached) {
    const now = new Date();
    await utimes(dir, now, now).catch(() => undefined); // used now: the last to be evicted
    return cached;
  }
  await mkdir(access.cacheDir, { recursive: true });
  const home = await mkdtemp(join(tmpdir(), "syncward-helm-fetch-"));
  try {
    const env = sandboxEnv(home);
    const out = join(home, "out");
    await mkdir(out);
    // The operator's credentials only where the environment's project grants them (projects/grants.ts).
    const grantedHere =
      !access.credentialsGranted || repositoryAllowed(req.repository, access.credentialsGranted);
    const credential = grantedHere ? credentialFor(req.repository, access.credentials) : undefined;
    const helm = (args: string[]) =>
      run({ file: req.helm, args, env, cwd: home, timeoutMs: req.timeoutMs, maxOutputBytes: 1024 * 1024 });
    let result: Awaited<ReturnType<typeof run>>;
    if (req.repository.startsWith("oci://")) {
      if (credential) {
        // What `helm registry login` would write, without a login round trip or the password on a command line.
        const host = new URL(req.repository.replace(/^oci:/, "https:")).host;
        const auth = Buffer.from(`${credential.username}:${credential.password}`).toString("base64");
        await writeFile(env.HELM_REGISTRY_CONFIG as string, JSON.stringify({ auths: { [host]: { auth } } }), {
          mode: 0o600,
        });
      }
      const ref = `${normalize(req.repository)}/${req.chart}`;
      const plain = repositoryAllowed(req.repository, access.plainHttp ?? []) ? ["--plain-http"] : [];
      result = await helm(["pull", ref, "--version", req.version, "--destination", out, ...plain]);
    } else {
      // A repositories.yaml of its own keeps the password out of helm's command line.
      const entry: Record<string, unknown> = {
        name: "dependency",
        url: normalize(req.repository),
        pass_credentials_all: req.passCredentials,
        ...(credential ? { username: credential.username, password: credential.password } : {}),
      };
      await writeFile(
        env.HELM_REPOSITORY_CONFIG as string,
        JSON.stringify({ apiVersion: "", generated: "0001-01-01T00:00:00Z", repositories: [entry] }),
        { mode: 0o600 },
      );
      result = await helm(["repo", "update", "dependency", "--fail-on-repo-update-fail"]);
      if (result.ok)
        result = await helm([
          "pull",
          `dependency/${req.chart}`,
          "--version",
          req.version,
          "--destination",
          out,
        ]);
    }
    if (!result.ok) {
      // `helm repo update` says why on standard output ("Unable to get an update ...: 401 Unauthorized").
      const lines = result.stdout.split("\n");
      const from = lines.findIndex((l) => /Unable to get an update/.test(l));
      const why =
        from < 0
          ? []
          : [
              [lines[from], ...lines.slice(from + 1).filter((l) => /^\s/.test(l))]
                .map((l) => (l ?? "").replace(/^\.*/, "").trim())
                .join(" "),
            ];
      const text = [...why, failureText(result)]
        .join("; ")
        .split(`${home}/`)
        .join("")
        .replace(/Error: /g, "");
      throw new Error(hidePassword(text, credential));
    }
    const archive = await archiveIn(out);
    if (!archive) throw new Error("helm pull wrote no chart archive");
    // Into the cache by rename, so another process never sees half an archive.
    const staged = `${dir}.${process.pid}.${Date.now()}`;
    await mkdir(staged, { recursive: true });
    const name = archive.slice(out.length + 1);
    await copyFile(archive, join(staged, name));
    await rename(staged, dir).catch(async () => {
      await rm(staged, { recursive: true, force: true }); // another process was first: use its copy
    });
    await pruneCharts(access.cacheDir, dir, access.maxBytes ?? cacheLimitsFromEnv().helmCacheBytes);
    return (await archiveIn(dir)) ?? join(dir, name);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Keeps the chart cache within `maxBytes` (SYNCWARD_HELM_CACHE_BYTES): least recently used entries
 * go first; the one just fetched stays, and a render already holding its archive copied it away.
 */
async function pruneCharts(cacheDir: string, keep: string, maxBytes: number): Promise<void> {
  const entries: Array<{ dir: string; bytes: number; usedAt: number }> = [];
  for (const name of await readdir(cacheDir).catch(() => [] as string[])) {
    const dir = join(cacheDir, name);
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory() || /\.\d+\.\d+$/.test(name)) continue; // a fetch being staged
    let bytes = 0;
    for (const f of await readdir(dir).catch(() => [] as string[]))
      bytes += (await stat(join(dir, f)).catch(() => undefined))?.size ?? 0;
    entries.push({ dir, bytes, usedAt: info.mtimeMs });
  }
  let total = entries.reduce((sum, e) => sum + e.bytes, 0);
  for (const e of entries.sort((a, b) => a.usedAt - b.usedAt)) {
    if (total <= maxBytes) break;
    if (e.dir === keep) continue;
    await rm(e.dir, { recursive: true, force: true });
    total -= e.bytes;
  }
}

function hidePassword(text: string, credential: RepositoryCredential | undefined): string {
  return credential && credential.password !== "" ? text.split(credential.password).join("***") : text;
}
