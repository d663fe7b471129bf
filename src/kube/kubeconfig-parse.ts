// A kubeconfig file as data: its clusters, users and contexts, checked field by field so that a
// mistake names the file and the entry, and one context chosen from it. Pure: no file is read
// here (paths are only made absolute against the file's directory); see kubeconfig-load.ts.
import { isAbsolute, join } from "node:path";
import { parse } from "yaml";

export interface KubeCluster {
  name: string;
  server: string;
  /** PEM, decoded from certificate-authority-data. */
  caData?: string;
  caFile?: string;
  skipTLSVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export type ExecApiVersion = "client.authentication.k8s.io/v1" | "client.authentication.k8s.io/v1beta1";
export type InteractiveMode = "Never" | "IfAvailable" | "Always";

export interface ExecConfig {
  apiVersion: ExecApiVersion;
  command: string;
  args: string[];
  env: Array<{ name: string; value: string }>;
  interactiveMode: InteractiveMode;
  provideClusterInfo: boolean;
}

export interface KubeUser {
  name: string;
  token?: string;
  tokenFile?: string;
  /** PEM, decoded from client-certificate-data / client-key-data. */
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  exec?: ExecConfig;
  /** The name of a legacy auth-provider (gcp, azure, oidc): refused when the context uses it. */
  authProvider?: string;
  impersonate?: string;
  impersonateGroups: string[];
}

export interface KubeContext {
  name: string;
  cluster: string;
  user?: string;
  namespace?: string;
}

export interface KubeconfigDoc {
  clusters: KubeCluster[];
  users: KubeUser[];
  contexts: KubeContext[];
  currentContext?: string;
}

/** One context with its cluster and user, what a client connects with. */
export interface KubeSelection {
  context: KubeContext;
  cluster: KubeCluster;
  user: KubeUser;
}

export const EXEC_API_VERSIONS: readonly ExecApiVersion[] = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
];
const INTERACTIVE_MODES: readonly InteractiveMode[] = ["Never", "IfAvailable", "Always"];

type Json = Record<string, unknown>;

class Reader {
  constructor(readonly source: string) {}

  fail(at: string, problem: string): never {
    throw new Error(`${this.source}: ${at} ${problem}`);
  }

  object(value: unknown, at: string): Json {
    if (value === undefined || value === null) return {};
    if (typeof value !== "object" || Array.isArray(value)) this.fail(at, "must be a mapping");
    return value as Json;
  }

  list(value: unknown, at: string): unknown[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.fail(at, "must be a list");
    return value;
  }

  string(value: unknown, at: string): string | undefined {
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value !== "string") this.fail(at, "must be a string");
    return value;
  }

  required(value: unknown, at: string): string {
    return this.string(value, at) ?? this.fail(at, "is missing");
  }

  bool(value: unknown, at: string): boolean {
    if (value === undefined || value === null) return false;
    if (typeof value !== "boolean") this.fail(at, "must be true or false");
    return value;
  }

  base64(value: unknown, at: string): string | undefined {
    const text = this.string(value, at);
    if (text === undefined) return undefined;
    if (!/^[A-Za-z0-9+/=\s]*$/.test(text)) this.fail(at, "is not base64");
    return Buffer.from(text, "base64").toString("utf8");
  }

  /** A path relative to the kubeconfig's directory, as kubectl resolves it. */
  path(value: unknown, at: string, dir: string | undefined): string | undefined {
    const p = this.string(value, at);
    return p === undefined || !dir || isAbsolute(p) ? p : join(dir, p);
  }

  /** Each entry's `name` and its inner mapping (`cluster`, `user`, `context`). */
  entries(value: unknown, list: string, inner: string): Array<{ name: string; body: Json; at: string }> {
    const seen = new Set<string>();
    return this.list(value, list).map((raw, i) => {
      const entry = this.object(raw, `${list}[${i}]`);
      const name = this.required(entry.name, `${list}[${i}].name`);
      const at = `${list}[${i}] ("${name}")`;
      if (seen.has(name)) this.fail(at, `repeats the name "${name}"`);
      seen.add(name);
      return { name, body: this.object(entry[inner], `${at}.${inner}`), at: `${at}.${inner}` };
    });
  }
}

function parseExec(r: Reader, value: unknown, at: string, dir: string | undefined): ExecConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const exec = r.object(value, at);
  const apiVersion = r.required(exec.apiVersion, `${at}.apiVersion`);
  if (!EXEC_API_VERSIONS.includes(apiVersion as ExecApiVersion)) {
    r.fail(`${at}.apiVersion`, `"${apiVersion}" is not supported (use ${EXEC_API_VERSIONS.join(" or ")})`);
  }
  const mode = r.string(exec.interactiveMode, `${at}.interactiveMode`);
  // client.authentication.k8s.io/v1 makes the mode mandatory; v1beta1 defaults it to IfAvailable.
  if (mode === undefined && apiVersion === EXEC_API_VERSIONS[0]) {
    r.fail(`${at}.interactiveMode`, "is missing (required by client.authentication.k8s.io/v1: use Never)");
  }
  if (mode !== undefined && !INTERACTIVE_MODES.includes(mode as InteractiveMode)) {
    r.fail(`${at}.interactiveMode`, `must be one of ${INTERACTIVE_MODES.join(", ")}`);
  }
  const command = r.required(exec.command, `${at}.command`);
  return {
    apiVersion: apiVersion as ExecApiVersion,
    // A bare name is looked up on PATH; a path with a separator is relative to the kubeconfig.
    command: command.includes("/") ? (r.path(command, `${at}.command`, dir) ?? command) : command,
    args: r.list(exec.args, `${at}.args`).map((a, i) => r.required(a, `${at}.args[${i}]`)),
    env: r.list(exec.env, `${at}.env`).map((e, i) => {
      const pair = r.object(e, `${at}.env[${i}]`);
      return {
        name: r.required(pair.name, `${at}.env[${i}].name`),
        value: r.string(pair.value, `${at}.env[${i}].value`) ?? "",
      };
    }),
    interactiveMode: (mode ?? "IfAvailable") as InteractiveMode,
    provideClusterInfo: r.bool(exec.provideClusterInfo, `${at}.provideClusterInfo`),
  };
}

/**
 * Parses kubeconfig YAML. `source` names the file in messages; `dir` (the file's directory)
 * makes relative certificate, key, token-file and exec command paths absolute.
 */
export function parseKubeconfig(text: string, source: string, dir?: string): KubeconfigDoc {
  const r = new Reader(source);
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new Error(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  const top = r.object(raw, "the document");
  const clusters = r.entries(top.clusters, "clusters", "cluster").map(({ name, body, at }) => ({
    name,
    server: r.required(body.server, `${at}.server`).replace(/\/+$/, ""),
    caData: r.base64(body["certificate-authority-data"], `${at}.certificate-authority-data`),
    caFile: r.path(body["certificate-authority"], `${at}.certificate-authority`, dir),
    skipTLSVerify: r.bool(body["insecure-skip-tls-verify"], `${at}.insecure-skip-tls-verify`),
    tlsServerName: r.string(body["tls-server-name"], `${at}.tls-server-name`),
    proxyUrl: r.string(body["proxy-url"], `${at}.proxy-url`),
  }));
  const users = r.entries(top.users, "users", "user").map(({ name, body, at }) => {
    const provider = body["auth-provider"];
    return {
      name,
      token: r.string(body.token, `${at}.token`),
      tokenFile: r.path(body.tokenFile ?? body["token-file"], `${at}.tokenFile`, dir),
      certData: r.base64(body["client-certificate-data"], `${at}.client-certificate-data`),
      certFile: r.path(body["client-certificate"], `${at}.client-certificate`, dir),
      keyData: r.base64(body["client-key-data"], `${at}.client-key-data`),
      keyFile: r.path(body["client-key"], `${at}.client-key`, dir),
      username: r.string(body.username, `${at}.username`),
      password: r.string(body.password, `${at}.password`),
      exec: parseExec(r, body.exec, `${at}.exec`, dir),
      authProvider:
        provider === undefined || provider === null
          ? undefined
          : (r.string(r.object(provider, `${at}.auth-provider`).name, `${at}.auth-provider.name`) ??
            "unnamed"),
      impersonate: r.string(body.as, `${at}.as`),
      impersonateGroups: r
        .list(body["as-groups"], `${at}.as-groups`)
        .map((g, i) => r.required(g, `${at}.as-groups[${i}]`)),
    };
  });
  const contexts = r.entries(top.contexts, "contexts", "context").map(({ name, body, at }) => ({
    name,
    cluster: r.required(body.cluster, `${at}.cluster`),
    user: r.string(body.user, `${at}.user`),
    namespace: r.string(body.namespace, `${at}.namespace`),
  }));
  return { clusters, users, contexts, currentContext: r.string(top["current-context"], "current-context") };
}

/**
 * Several kubeconfig files (KUBECONFIG=a:b) as one: as kubectl merges them, the first file to
 * name a cluster, user or context wins, and so does the first current-context.
 */
export function mergeKubeconfigs(docs: KubeconfigDoc[]): KubeconfigDoc {
  const first = <T extends { name: string }>(lists: T[][]): T[] => {
    const byName = new Map<string, T>();
    for (const item of lists.flat()) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  return {
    clusters: first(docs.map((d) => d.clusters)),
    users: first(docs.map((d) => d.users)),
    contexts: first(docs.map((d) => d.contexts)),
    currentContext: docs.find((d) => d.currentContext)?.currentContext,
  };
}

/** The context `name` (default: current-context) with its cluster and user, or a clear error. */
export function selectContext(doc: KubeconfigDoc, source: string, name?: string): KubeSelection {
  const wanted = name ?? doc.currentContext;
  if (!wanted) {
    throw new Error(`${source}: no current-context: set one (kubectl config use-context) or pass --context`);
  }
  const context = doc.contexts.find((c) => c.name === wanted);
  if (!context) {
    const known = doc.contexts.map((c) => c.name);
    throw new Error(
      `${source}: kubeconfig has no context named "${wanted}"${known.length > 0 ? ` (contexts: ${known.join(", ")})` : ""}`,
    );
  }
  const cluster = doc.clusters.find((c) => c.name === context.cluster);
  if (!cluster)
    throw new Error(
      `${source}: context "${wanted}" names cluster "${context.cluster}", which is not defined`,
    );
  let user: KubeUser = { name: "", impersonateGroups: [] };
  if (context.user) {
    const found = doc.users.find((u) => u.name === context.user);
    if (!found)
      throw new Error(`${source}: context "${wanted}" names user "${context.user}", which is not defined`);
    user = found;
  }
  if (user.authProvider !== undefined) {
    throw new Error(
      `${source}: user "${user.name}" authenticates with auth-provider "${user.authProvider}", which syncward does not support: use an exec credential plugin instead (e.g. kubelogin for OIDC, gke-gcloud-auth-plugin, kubelogin for Azure)`,
    );
  }
  return { context, cluster, user };
}
