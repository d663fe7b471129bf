// A destination cluster kept as a Secret in syncward's namespace, in Argo CD's cluster Secret
// layout (data `name`, `server`, `config` JSON with bearerToken, tlsClientConfig,
// execProviderConfig, proxyUrl) under syncward's own label. Pure: Secret <-> the KubeSelection a
// KubeClient connects with. Errors name the Secret and the key, never a value.
import type { ExecConfig, KubeCluster, KubeSelection, KubeUser } from "./kubeconfig-parse.ts";
import type { KubeObject } from "./object.ts";
import { parseProxyUrl } from "./proxy-agent.ts";

export const CLUSTER_SECRET_LABEL = "syncward.dev/secret-type";
export const CLUSTER_SECRET_TYPE = "cluster";
export const ARGO_SECRET_LABEL = "argocd.argoproj.io/secret-type";

/** Argo CD's cluster `config` (the subset syncward reads; field names are Argo CD's). */
export interface ClusterConfig {
  bearerToken?: string;
  tlsClientConfig?: {
    insecure?: boolean;
    serverName?: string;
    /** base64 PEM, as in Argo CD */
    caData?: string;
    certData?: string;
    keyData?: string;
  };
  execProviderConfig?: {
    command: string;
    args?: string[];
    env?: Record<string, string>;
    apiVersion?: string;
  };
  proxyUrl?: string;
}

export interface ClusterEntry {
  name: string;
  server: string;
  /** The Secret it came from. */
  secret: string;
  /** Changes whenever the Secret does (its resourceVersion): a rotated credential makes a new client. */
  version: string;
  selection: KubeSelection;
}

export class ClusterSecretError extends Error {
  override readonly name = "ClusterSecretError";
}

type SecretLike = KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> };

/** The name a cluster Secret gives its cluster (data `name`, else the Secret's name). */
export function clusterNameOf(secret: SecretLike): string {
  return field(secret, "name") ?? secret.metadata.name;
}

function field(secret: SecretLike, key: string): string | undefined {
  const s = secret.stringData?.[key];
  if (s !== undefined) return s;
  const d = secret.data?.[key];
  return d === undefined ? undefined : Buffer.from(d, "base64").toString("utf8");
}

const pem = (b64: string | undefined) => (b64 ? Buffer.from(b64, "base64").toString("utf8") : undefined);

function execOf(e: NonNullable<ClusterConfig["execProviderConfig"]>, at: string): ExecConfig {
  if (typeof e.command !== "string" || e.command === "")
    throw new ClusterSecretError(`${at}: config.execProviderConfig.command must be a non-empty string`);
  const apiVersion = e.apiVersion ?? "client.authentication.k8s.io/v1beta1";
  if (
    apiVersion !== "client.authentication.k8s.io/v1" &&
    apiVersion !== "client.authentication.k8s.io/v1beta1"
  )
    throw new ClusterSecretError(
      `${at}: config.execProviderConfig.apiVersion must be client.authentication.k8s.io/v1 or v1beta1`,
    );
  return {
    apiVersion,
    command: e.command,
    args: Array.isArray(e.args) ? e.args.map(String) : [],
    env: Object.entries(e.env ?? {}).map(([name, value]) => ({ name, value: String(value) })),
    interactiveMode: "Never",
    provideClusterInfo: false,
  };
}

/** The cluster a Secret describes; throws ClusterSecretError naming the Secret and the bad key. */
export function clusterFromSecret(secret: SecretLike): ClusterEntry {
  const at = `cluster Secret ${secret.metadata.namespace ?? ""}/${secret.metadata.name}`;
  const name = field(secret, "name") ?? secret.metadata.name;
  const server = field(secret, "server");
  if (!server) throw new ClusterSecretError(`${at}: data.server is missing (the API server's https URL)`);
  try {
    const url = new URL(server);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("scheme");
  } catch {
    throw new ClusterSecretError(`${at}: data.server is not an http(s) URL`);
  }
  let config: ClusterConfig = {};
  const raw = field(secret, "config");
  if (raw !== undefined && raw.trim() !== "") {
    try {
      config = JSON.parse(raw) as ClusterConfig;
    } catch {
      // The parser's message may quote the value: it is not passed on.
      throw new ClusterSecretError(`${at}: data.config is not valid JSON`);
    }
    if (typeof config !== "object" || config === null || Array.isArray(config))
      throw new ClusterSecretError(`${at}: data.config must be a JSON object`);
  }
  if (config.proxyUrl !== undefined) {
    try {
      parseProxyUrl(String(config.proxyUrl), at);
    } catch {
      // Its message would quote the URL, which may carry a proxy password.
      throw new ClusterSecretError(`${at}: config.proxyUrl is not an http, https or socks5 URL`);
    }
  }
  const tls = config.tlsClientConfig ?? {};
  const cluster: KubeCluster = {
    name,
    server,
    caData: pem(tls.caData),
    skipTLSVerify: tls.insecure === true,
    tlsServerName: tls.serverName,
    proxyUrl: config.proxyUrl,
  };
  const user: KubeUser = {
    name,
    token: config.bearerToken || undefined,
    certData: pem(tls.certData),
    keyData: pem(tls.keyData),
    impersonateGroups: [],
  };
  if (config.execProviderConfig) user.exec = execOf(config.execProviderConfig, at);
  if ((user.certData === undefined) !== (user.keyData === undefined))
    throw new ClusterSecretError(`${at}: config.tlsClientConfig needs both certData and keyData`);
  return {
    name,
    server,
    secret: secret.metadata.name,
    version: secret.metadata.resourceVersion ?? JSON.stringify([server, raw ?? ""]),
    selection: { context: { name, cluster: name, user: name }, cluster, user },
  };
}

/** A Kubernetes name for the Secret of cluster `name` (Argo CD names them cluster-<host>-<hash>). */
export function clusterSecretName(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 200);
  return `cluster-${slug || "unnamed"}`;
}

const b64 = (s: string | undefined) =>
  s === undefined ? undefined : Buffer.from(s, "utf8").toString("base64");

/** The Secret that registers `selection` (a kubeconfig context) as cluster `name`. */
export function clusterSecretFor(
  name: string,
  namespace: string,
  selection: { cluster: KubeCluster; user: KubeUser },
  read: { ca?: string; cert?: string; key?: string; token?: string } = {},
): KubeObject & { type: string; stringData: Record<string, string> } {
  const { cluster, user } = selection;
  const config: ClusterConfig = {};
  const token = read.token ?? user.token;
  if (token) config.bearerToken = token;
  const tls: NonNullable<ClusterConfig["tlsClientConfig"]> = {};
  if (cluster.skipTLSVerify) tls.insecure = true;
  if (cluster.tlsServerName) tls.serverName = cluster.tlsServerName;
  const ca = read.ca ?? cluster.caData;
  const cert = read.cert ?? user.certData;
  const key = read.key ?? user.keyData;
  if (ca) tls.caData = b64(ca);
  if (cert && key) {
    tls.certData = b64(cert);
    tls.keyData = b64(key);
  }
  if (Object.keys(tls).length > 0) config.tlsClientConfig = tls;
  if (user.exec)
    config.execProviderConfig = {
      command: user.exec.command,
      args: user.exec.args,
      env: Object.fromEntries(user.exec.env.map((e) => [e.name, e.value])),
      apiVersion: user.exec.apiVersion,
    };
  if (cluster.proxyUrl) config.proxyUrl = cluster.proxyUrl;
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: clusterSecretName(name),
      namespace,
      labels: { [CLUSTER_SECRET_LABEL]: CLUSTER_SECRET_TYPE },
    },
    stringData: { name, server: cluster.server, config: JSON.stringify(config) },
  };
}

/**
 * An Argo CD cluster Secret as syncward's: the same data under syncward's label (a copy; the Argo
 * CD Secret stays as it is). Throws ClusterSecretError when it is not one or cannot be read.
 */
export function clusterSecretFromArgo(
  argo: SecretLike,
  namespace: string,
): KubeObject & { type: string; stringData: Record<string, string> } {
  if (argo.kind !== "Secret" || argo.metadata?.labels?.[ARGO_SECRET_LABEL] !== "cluster")
    throw new ClusterSecretError(
      `${argo.metadata?.name ?? "document"}: not an Argo CD cluster Secret (kind Secret, label ${ARGO_SECRET_LABEL}: cluster)`,
    );
  const entry = clusterFromSecret(argo); // checks it reads, with Argo CD's names in messages
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: clusterSecretName(entry.name),
      namespace,
      labels: { [CLUSTER_SECRET_LABEL]: CLUSTER_SECRET_TYPE },
    },
    stringData: { name: entry.name, server: entry.server, config: field(argo, "config") ?? "{}" },
  };
}
