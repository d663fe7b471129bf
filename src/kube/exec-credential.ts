// Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1): the command a kubeconfig
// user names is run without a terminal, its ExecCredential is checked, and the credential is
// reused until its expirationTimestamp (or, without one, until the API server answers 401).
import { spawn } from "node:child_process";
import type { ExecConfig, KubeCluster } from "./kubeconfig-parse.ts";

export interface ExecResult {
  token?: string;
  /** PEM client certificate and key. */
  cert?: string;
  key?: string;
  /** ms since the epoch; undefined: valid until the server refuses it. */
  expiresAt?: number;
}

/** What the plugin may read from KUBERNETES_EXEC_INFO: never interactive; the cluster when asked. */
export function execInfo(exec: ExecConfig, cluster: KubeCluster): string {
  const info: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo) {
    info.cluster = {
      server: cluster.server,
      ...(cluster.tlsServerName ? { "tls-server-name": cluster.tlsServerName } : {}),
      ...(cluster.skipTLSVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(cluster.caData
        ? { "certificate-authority-data": Buffer.from(cluster.caData).toString("base64") }
        : {}),
      ...(cluster.proxyUrl ? { "proxy-url": cluster.proxyUrl } : {}),
    };
  }
  return JSON.stringify({ apiVersion: exec.apiVersion, kind: "ExecCredential", spec: info });
}

/** The plugin's standard output as a credential, or an error that says what is wrong with it. */
export function readExecCredential(stdout: string, exec: ExecConfig, label: string): ExecResult {
  let doc: {
    apiVersion?: unknown;
    kind?: unknown;
    status?: {
      token?: unknown;
      clientCertificateData?: unknown;
      clientKeyData?: unknown;
      expirationTimestamp?: unknown;
    };
  };
  try {
    doc = JSON.parse(stdout) as typeof doc;
  } catch {
    throw new Error(`${label} did not print an ExecCredential as JSON`);
  }
  if (doc === null || typeof doc !== "object")
    throw new Error(`${label} did not print an ExecCredential object`);
  if (doc.kind !== "ExecCredential")
    throw new Error(`${label} printed kind "${String(doc.kind)}", not ExecCredential`);
  if (doc.apiVersion !== exec.apiVersion) {
    throw new Error(
      `${label} printed apiVersion "${String(doc.apiVersion)}", but the kubeconfig asks for ${exec.apiVersion}`,
    );
  }
  const status = doc.status ?? {};
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const result: ExecResult = {
    token: text(status.token),
    cert: text(status.clientCertificateData),
    key: text(status.clientKeyData),
  };
  if (Boolean(result.cert) !== Boolean(result.key)) {
    throw new Error(
      `${label} printed ${result.cert ? "clientCertificateData without clientKeyData" : "clientKeyData without clientCertificateData"}`,
    );
  }
  if (!result.token && !result.cert)
    throw new Error(`${label} printed neither a token nor a client certificate`);
  if (status.expirationTimestamp !== undefined && status.expirationTimestamp !== null) {
    const at =
      typeof status.expirationTimestamp === "string" ? Date.parse(status.expirationTimestamp) : Number.NaN;
    if (Number.isNaN(at)) {
      throw new Error(
        `${label} printed expirationTimestamp ${JSON.stringify(status.expirationTimestamp)}, not an RFC 3339 time`,
      );
    }
    result.expiresAt = at;
  }
  return result;
}

const PLUGIN_TIMEOUT_MS = 120_000;

function runPlugin(exec: ExecConfig, cluster: KubeCluster, label: string): Promise<string> {
  if (exec.interactiveMode === "Always") {
    return Promise.reject(
      new Error(
        `${label} needs a terminal (interactiveMode: Always), and syncward runs without one: set interactiveMode: Never`,
      ),
    );
  }
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: execInfo(exec, cluster) };
  for (const { name, value } of exec.env) env[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command, exec.args, { env, stdio: ["ignore", "pipe", "pipe"] });
    // Not spawn's own `timeout`: its timer outlives a command that could not be started.
    const timer = setTimeout(() => child.kill("SIGTERM"), PLUGIN_TIMEOUT_MS);
    timer.unref();
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      err += c;
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`${label} could not be started: ${e.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else {
        const why = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
        const tail = err.trim().slice(-500);
        reject(new Error(`${label} ${why}${tail ? `: ${tail}` : ""}`));
      }
    });
  });
}

/** One user's plugin: runs it when no credential is held or the held one has expired. */
export class ExecCredentials {
  private held?: Promise<ExecResult>;
  private readonly label: string;

  constructor(
    private readonly exec: ExecConfig,
    private readonly cluster: KubeCluster,
    userName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.label = `exec credential plugin "${exec.command}" (kubeconfig user "${userName}")`;
  }

  async get(): Promise<ExecResult> {
    if (this.held) {
      const held = await this.held.catch(() => undefined);
      if (held && (held.expiresAt === undefined || held.expiresAt > this.now())) return held;
      this.held = undefined;
    }
    // Concurrent callers share one run of the plugin.
    this.held ??= runPlugin(this.exec, this.cluster, this.label).then((out) =>
      readExecCredential(out, this.exec, this.label),
    );
    const pending = this.held;
    return pending.catch((err: unknown) => {
      if (this.held === pending) this.held = undefined;
      throw err;
    });
  }

  /** The server refused the credential: the next request runs the plugin again. */
  forget(): void {
    this.held = undefined;
  }
}
