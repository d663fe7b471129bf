// Where the cluster and its credentials come from: --kubeconfig, KUBECONFIG (several files,
// merged as kubectl merges them), ~/.kube/config, or the Pod's service account. Turns the chosen
// context into what each request needs (TLS material and an Authorization header), re-reading
// files on every refresh so rotated certificates and projected tokens take effect.
import { existsSync, readFileSync } from "node:fs";
import type { Agent as HttpAgent } from "node:http";
import type { RequestOptions } from "node:https";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { createSecureContext, type SecureContext } from "node:tls";
import { type ProxyEnv, proxyFromEnvironment } from "./env-proxy.ts";
import { ExecCredentials } from "./exec-credential.ts";
import {
  type KubeCluster,
  type KubeContext,
  type KubeconfigDoc,
  type KubeSelection,
  type KubeUser,
  mergeKubeconfigs,
  parseKubeconfig,
  selectContext,
} from "./kubeconfig-parse.ts";
import { parseProxyUrl, proxyAgent } from "./proxy-agent.ts";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
export const IN_CLUSTER_CONTEXT = "in-cluster";

export interface KubeconfigSources {
  /** --kubeconfig: one file, used alone. */
  file?: string;
  context?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
  serviceAccountDir?: string;
}

export interface AuthOptions {
  /** Node passes `secureContext` on to tls.connect, though https.RequestOptions does not declare it. */
  options: RequestOptions & { headers: Record<string, string | string[]>; secureContext?: SecureContext };
  /** ms since the epoch when the credential in `options` stops being valid, if it says. */
  expiresAt?: number;
}

function readFile(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(
      `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

function loadFile(path: string): KubeconfigDoc {
  return parseKubeconfig(readFile(path, "kubeconfig"), path, dirname(path));
}

/** The Pod's service account as a kubeconfig: the API server from the service env, token re-read. */
export function inClusterConfig(env: NodeJS.ProcessEnv, dir: string): KubeconfigDoc {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      "in-cluster config needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (is this a Pod?)",
    );
  }
  const namespaceFile = join(dir, "namespace");
  return {
    clusters: [
      {
        name: IN_CLUSTER_CONTEXT,
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        caFile: join(dir, "ca.crt"),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: IN_CLUSTER_CONTEXT, tokenFile: join(dir, "token"), impersonateGroups: [] }],
    contexts: [
      {
        name: IN_CLUSTER_CONTEXT,
        cluster: IN_CLUSTER_CONTEXT,
        user: IN_CLUSTER_CONTEXT,
        namespace: existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8").trim() : undefined,
      },
    ],
    currentContext: IN_CLUSTER_CONTEXT,
  };
}

/** Which kubeconfig applies, in kubectl's order, ending with the service account inside a Pod. */
export function findKubeconfig(sources: KubeconfigSources): { doc: KubeconfigDoc; source: string } {
  const env = sources.env ?? process.env;
  if (sources.file) return { doc: loadFile(sources.file), source: sources.file };
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
  if (listed.length > 0) {
    // kubectl skips listed files that do not exist; a list with none of them is an error here.
    const present = listed.filter((f) => existsSync(f));
    if (present.length === 0) throw new Error(`KUBECONFIG names no existing file: ${listed.join(delimiter)}`);
    return {
      doc: mergeKubeconfigs(present.map(loadFile)),
      source: `KUBECONFIG (${present.join(delimiter)})`,
    };
  }
  const home = sources.home ?? env.HOME ?? homedir();
  const own = join(home, ".kube", "config");
  if (existsSync(own)) return { doc: loadFile(own), source: own };
  const saDir = sources.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(saDir, "token"))) {
    return { doc: inClusterConfig(env, saDir), source: "in-cluster service account" };
  }
  throw new Error(
    `no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ${own}, or run in a Pod with a service account`,
  );
}

/** TLS options for the cluster and user: files are read now, so a rotated file takes effect. */
export function tlsOptions(cluster: KubeCluster, user: KubeUser): RequestOptions {
  const options: RequestOptions = {};
  const ca = cluster.caFile ? readFile(cluster.caFile, "certificate-authority") : cluster.caData;
  if (ca) options.ca = ca;
  const cert = user.certFile ? readFile(user.certFile, "client-certificate") : user.certData;
  const key = user.keyFile ? readFile(user.keyFile, "client-key") : user.keyData;
  if (cert) options.cert = cert;
  if (key) options.key = key;
  if (cluster.skipTLSVerify) options.rejectUnauthorized = false;
  if (cluster.tlsServerName) options.servername = cluster.tlsServerName;
  return options;
}

/** Headers every request carries besides the credential: impersonation from `as`/`as-groups`. */
function impersonation(user: KubeUser): Record<string, string | string[]> {
  return {
    ...(user.impersonate ? { "Impersonate-User": user.impersonate } : {}),
    ...(user.impersonateGroups.length > 0 ? { "Impersonate-Group": user.impersonateGroups } : {}),
  };
}

/** A loaded kubeconfig context: what KubeClient connects with. */
export class Kubeconfig {
  readonly context: KubeContext;
  readonly cluster: KubeCluster;
  readonly user: KubeUser;
  /** Where it came from, for messages. */
  readonly source: string;
  private readonly exec?: ExecCredentials;
  private readonly proxy?: URL;
  /** The TLS context of the current CA and client certificate, shared by every connection. */
  private tls?: { material: string; context: SecureContext };

  /** `env`: where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read when the cluster has no proxy-url. */
  constructor(selection: KubeSelection, source: string, env: ProxyEnv = process.env) {
    this.context = selection.context;
    this.cluster = selection.cluster;
    this.user = selection.user;
    this.source = source;
    if (this.user.exec) this.exec = new ExecCredentials(this.user.exec, this.cluster, this.user.name);
    if (this.cluster.proxyUrl) {
      this.proxy = parseProxyUrl(this.cluster.proxyUrl, `${source}: cluster "${this.cluster.name}"`);
    } else {
      this.proxy = proxyFromEnvironment(this.server, env);
    }
  }

  static load(sources: KubeconfigSources = {}): Kubeconfig {
    const { doc, source } = findKubeconfig(sources);
    return new Kubeconfig(selectContext(doc, source, sources.context), source, sources.env);
  }

  get server(): URL {
    return new URL(this.cluster.server);
  }

  /** With proxy-url (or a proxy from the environment): one keep-alive agent that tunnels through the proxy, for every request. */
  proxyAgent(maxSockets?: number): HttpAgent | undefined {
    return this.proxy ? proxyAgent(this.proxy, this.server, maxSockets ? { maxSockets } : {}) : undefined;
  }

  /**
   * Options for the next requests. The credential, in kubectl's order of precedence: an exec
   * plugin's, a static token, a token file (re-read each time), a username and password; a
   * client certificate from the plugin replaces the kubeconfig's.
   */
  async authOptions(): Promise<AuthOptions> {
    const headers: Record<string, string | string[]> = impersonation(this.user);
    const options: AuthOptions["options"] = { ...tlsOptions(this.cluster, this.user), headers };
    let expiresAt: number | undefined;
    let token = this.user.token;
    if (this.exec) {
      const credential = await this.exec.get();
      expiresAt = credential.expiresAt;
      if (credential.cert && credential.key) {
        options.cert = credential.cert;
        options.key = credential.key;
      }
      token = credential.token ?? token;
    }
    if (this.server.protocol === "https:") options.secureContext = this.secureContext(options);
    if (!token && this.user.tokenFile) token = readFile(this.user.tokenFile, "tokenFile").trim();
    if (token) headers.Authorization = `Bearer ${token}`;
    else if (this.user.username !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${this.user.username}:${this.user.password ?? ""}`).toString("base64")}`;
    }
    return { options, expiresAt };
  }

  /**
   * One context per CA and client certificate rather than one per connection (what Node does
   * when each request carries ca/cert/key): a hundred watch streams then share one parsed
   * certificate store and key instead of each holding its own in native memory. The ca/cert/key
   * options stay beside it, so that the agents' pools still tell rotated credentials apart.
   */
  private secureContext(o: RequestOptions): SecureContext {
    const material = JSON.stringify([o.ca, o.cert, o.key]);
    if (this.tls?.material !== material) {
      try {
        this.tls = { material, context: createSecureContext({ ca: o.ca, cert: o.cert, key: o.key }) };
      } catch (err) {
        throw new Error(
          `${this.source}: the certificate authority or client certificate of context "${this.context.name}" cannot be used: ${(err as Error).message}`,
        );
      }
    }
    return this.tls.context;
  }

  /** The API server refused the credential (401): an exec plugin runs again next time. */
  forgetCredential(): void {
    this.exec?.forget();
  }
}
