// A thin client over the Kubernetes REST API. Authentication comes from the kubeconfig (see
// kubeconfig.ts); requests are plain JSON over a keep-alive agent so that objects stay exactly as the
// server sent them (no model classes), every request is counted, and many run concurrently.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import type { SecureClientSessionOptions } from "node:http2";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import { KubeApiError, KubeConnectionError } from "./errors.ts";
import { type Http2Liveness, type Http2Response, Http2Streams } from "./http2-streams.ts";
import { asImpersonated } from "./impersonation.ts";
import { Kubeconfig } from "./kubeconfig.ts";
import type { KubeSelection } from "./kubeconfig-parse.ts";
import { groupOf, type KubeObject, type ResourceKey } from "./object.ts";
import { Reachability } from "./reachability.ts";
import { scrubSecretValues } from "./scrub-secret.ts";

export interface ApiResource {
  /** Plural resource name used in URLs, e.g. `deployments`. */
  name: string;
  kind: string;
  group: string;
  version: string;
  namespaced: boolean;
  verbs: string[];
}

/** How often, and how patiently, a server in an outage is asked whether it answers again. */
const OUTAGE_PROBE_MS = 5_000;

export interface KubeClientOptions {
  kubeconfig?: string;
  context?: string;
  /** Bound on concurrent requests (sockets). */
  maxSockets?: number;
  /** Per-request timeout in ms (not for watches). */
  timeoutMs?: number;
  /** Watches over HTTP/2 when the server speaks it (default true; HTTP/1.1 through a proxy). */
  http2Watches?: boolean;
  /** The environment read for KUBECONFIG and HTTPS_PROXY/HTTP_PROXY/NO_PROXY (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** PING timing of HTTP/2 watch connections (default client-go's: 30 s read-idle, 15 s to answer). */
  http2Liveness?: Http2Liveness;
}

/** What a watch needs of its request, over either protocol. */
interface WatchRequest {
  on(event: "error", listener: (err: NodeJS.ErrnoException) => void): unknown;
  destroy(): unknown;
  end(): unknown;
}

export type Propagation = "foreground" | "background" | "orphan";

export interface RequestCounts {
  requests: number;
  writes: number;
  byVerb: Record<string, number>;
  /** Requests that ended, by verb and then HTTP status code, or "error" when no response came. */
  byVerbAndCode: Record<string, Record<string, number>>;
}

/** One request ended with `code` (counted once, when it ends: its answer or its failure). */
function countCode(counts: RequestCounts, verb: string, code: number | "error"): void {
  const codes = counts.byVerbAndCode[verb] ?? {};
  codes[code] = (codes[code] ?? 0) + 1;
  counts.byVerbAndCode[verb] = codes;
}

const FIELD_MANAGER = "syncward";

export class KubeClient {
  readonly counts: RequestCounts = { requests: 0, writes: 0, byVerb: {}, byVerbAndCode: {} };
  /** Whether the API server answers (shared with writingAs() views, like the counts). */
  readonly reachability = new Reachability();
  private readonly discovery = new Map<string, Promise<ApiResource[] | undefined>>();
  private readonly agent: HttpAgent | HttpsAgent;
  /** Watches hold their connection for minutes: they get their own pool, or they would starve requests. */
  private readonly watchAgent: HttpAgent | HttpsAgent;
  private baseOptions?: RequestOptions;
  /** When the options above are refreshed: a minute after they were made, or when the credential expires. */
  private baseOptionsUntil = 0;
  /**
   * With `proxy-url` in the kubeconfig: an agent that tunnels through the proxy (HTTP CONNECT or
   * SOCKS5), used for every request and watch instead of the direct pools above.
   */
  private readonly proxyAgent?: HttpAgent;
  /** The same for watches, uncapped: they hold their tunnel for minutes and would starve requests. */
  private readonly watchProxyAgent?: HttpAgent;
  private readonly http2?: Http2Streams;
  /** Impersonate-User of every write; reads and watches keep the client's own identity. */
  private writeAs?: string;
  private origin?: KubeClient;
  private readonly timeoutMs: number;
  private probing?: NodeJS.Timeout;
  private stopProbing?: () => void;

  private constructor(
    readonly kubeconfig: Kubeconfig,
    readonly server: URL,
    options: KubeClientOptions,
  ) {
    const maxSockets = options.maxSockets ?? 32;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.proxyAgent = kubeconfig.proxyAgent(maxSockets);
    this.watchProxyAgent = kubeconfig.proxyAgent();
    if ((options.http2Watches ?? true) && server.protocol === "https:")
      this.http2 = new Http2Streams(server.origin, options.http2Liveness, (m) => this.reachability.failed(m));
    // During an outage the server is asked every few seconds whether it is back, so that its
    // environments resume within seconds whatever their watches' backoff and poll interval.
    this.stopProbing = this.reachability.onChange((outage) => {
      clearInterval(this.probing);
      this.probing = undefined;
      if (!outage) return;
      this.probing = setInterval(
        () => void this.ping(OUTAGE_PROBE_MS).catch(() => undefined),
        OUTAGE_PROBE_MS,
      );
      this.probing.unref();
    });
    const agentOptions = { keepAlive: true, maxSockets };
    this.agent = server.protocol === "http:" ? new HttpAgent(agentOptions) : new HttpsAgent(agentOptions);
    this.watchAgent =
      server.protocol === "http:" ? new HttpAgent({ keepAlive: true }) : new HttpsAgent({ keepAlive: true });
  }

  static fromKubeconfig(options: KubeClientOptions = {}): KubeClient {
    const kc = Kubeconfig.load({ file: options.kubeconfig, context: options.context, env: options.env });
    return new KubeClient(kc, kc.server, options);
  }

  /** A client for a cluster given as data (a registry Secret), not read from a kubeconfig file. */
  static fromSelection(
    selection: KubeSelection,
    source: string,
    options: Omit<KubeClientOptions, "kubeconfig" | "context"> = {},
  ): KubeClient {
    const kc = new Kubeconfig(selection, source, options.env);
    return new KubeClient(kc, kc.server, options);
  }

  /** HTTP/2 connections the watches share (0 when they run over HTTP/1.1). */
  get watchConnections(): number {
    return this.http2?.connections ?? 0;
  }

  /**
   * A view of this client whose writes (apply and its dry runs, create, replace, delete) carry
   * Kubernetes impersonation headers as `user`, while reads and watches stay on this client's own
   * identity (so watches are shared). It shares connections, discovery and request counts.
   */
  writingAs(user: string): KubeClient {
    const view = Object.create(this) as KubeClient;
    view.writeAs = user;
    view.origin = this.root;
    return view;
  }

  /** The client a writingAs() view is of (itself otherwise): what watches and caches are keyed on. */
  get root(): KubeClient {
    return this.origin ?? this;
  }

  /** Current context's name, for messages. */
  get contextName(): string {
    return this.kubeconfig.context.name;
  }

  close(): void {
    // A request failing as the agents close must not start probing a closed client.
    this.stopProbing?.();
    clearInterval(this.probing);
    this.agent.destroy();
    this.watchAgent.destroy();
    this.proxyAgent?.destroy();
    this.watchProxyAgent?.destroy();
    this.http2?.close();
  }

  private async authOptions(): Promise<RequestOptions> {
    // Token files, certificates and exec plugins may rotate credentials: refresh them once a
    // minute, or sooner when the credential says it expires.
    if (!this.baseOptions || Date.now() >= this.baseOptionsUntil) {
      const { options, expiresAt } = await this.kubeconfig.authOptions();
      this.baseOptions = options;
      this.baseOptionsUntil = Math.min(Date.now() + 60_000, expiresAt ?? Number.POSITIVE_INFINITY);
    }
    return this.baseOptions;
  }

  /** One HTTP request; resolves with the parsed JSON body, rejects with KubeApiError or KubeConnectionError. */
  async request<T = unknown>(
    method: string,
    path: string,
    options: {
      body?: unknown;
      contentType?: string;
      timeoutMs?: number;
      /** A 2xx answer's body is drained, not parsed (it resolves undefined): a dry run's verdict is its status. */
      discardBody?: boolean;
    } = {},
  ): Promise<T> {
    const auth = await this.authOptions();
    const url = new URL(path, this.server);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    this.counts.requests++;
    this.counts.byVerb[method] = (this.counts.byVerb[method] ?? 0) + 1;
    if (method !== "GET" && !url.searchParams.has("dryRun")) this.counts.writes++;
    const send = url.protocol === "http:" ? httpRequest : httpsRequest;
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const req = send(
        url,
        {
          ...auth,
          method,
          agent: this.proxyAgent ?? this.agent,
          headers: {
            ...(auth.headers ?? {}),
            Accept: "application/json",
            ...(this.writeAs && method !== "GET" ? { "Impersonate-User": this.writeAs } : {}),
            ...(body !== undefined
              ? {
                  "Content-Type": options.contentType ?? "application/json",
                  "Content-Length": Buffer.byteLength(body),
                }
              : {}),
          },
          timeout: options.timeoutMs ?? this.timeoutMs,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          answered = true;
          countCode(this.counts, method, status);
          this.reachability.answered();
          if (options.discardBody && status >= 200 && status < 300) {
            res.on("end", () => resolve(undefined as T));
            res.on("error", (err) => reject(new KubeConnectionError(err.message, undefined)));
            res.resume();
            return;
          }
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            if (status >= 200 && status < 300) {
              resolve(parsed as T);
              return;
            }
            if (status === 401) this.forgetCredential();
            const st = (parsed ?? {}) as { message?: string; reason?: string };
            const err = new KubeApiError(
              scrubSecretValues(st.message ?? (text.slice(0, 300) || `HTTP ${status}`), options.body),
              status,
              st.reason ?? "",
              method,
              url.pathname,
            );
            reject(this.writeAs && method !== "GET" ? asImpersonated(err, this.writeAs) : err);
          });
          res.on("error", (err) => reject(new KubeConnectionError(err.message, undefined)));
        },
      );
      req.on("timeout", () =>
        req.destroy(Object.assign(new Error(`${method} ${url.pathname} timed out`), { code: "ETIMEDOUT" })),
      );
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (!answered) countCode(this.counts, method, "error");
        const message = `cannot reach the API server at ${this.server.origin}: ${err.message}`;
        this.reachability.failed(message);
        reject(new KubeConnectionError(message, err.code));
      });
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  /** The server refused the credential: the next request fetches a fresh one (an exec plugin runs again). */
  private forgetCredential(): void {
    this.baseOptions = undefined;
    this.kubeconfig.forgetCredential();
  }

  /** Resolves when the API server answers (readiness probes, a clear error at start). */
  async ping(timeoutMs?: number): Promise<void> {
    await this.request("GET", "/version", { timeoutMs });
  }

  // ---- discovery ----

  private groupVersionResources(apiVersion: string): Promise<ApiResource[] | undefined> {
    let pending = this.discovery.get(apiVersion);
    if (!pending) {
      const group = groupOf(apiVersion);
      const version = apiVersion.slice(apiVersion.indexOf("/") + 1);
      const path = group ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      pending = this.request<{ resources: Array<Omit<ApiResource, "group" | "version">> }>("GET", path).then(
        (list) =>
          list.resources
            .filter((r) => !r.name.includes("/"))
            .map((r) => ({
              name: r.name,
              kind: r.kind,
              namespaced: r.namespaced,
              verbs: r.verbs,
              group,
              version,
            })),
        (err: unknown) => {
          this.discovery.delete(apiVersion);
          if (err instanceof KubeApiError && err.status === 404) return undefined;
          throw err;
        },
      );
      this.discovery.set(apiVersion, pending);
    }
    return pending;
  }

  /** The API resource serving `kind` at `apiVersion`, or undefined when the cluster does not know it. */
  async resourceFor(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    let found = (await this.groupVersionResources(apiVersion))?.find((r) => r.kind === kind);
    if (!found) {
      // A CRD may have been established since discovery was cached.
      this.discovery.delete(apiVersion);
      found = (await this.groupVersionResources(apiVersion))?.find((r) => r.kind === kind);
    }
    return found;
  }

  forgetDiscovery(): void {
    this.discovery.clear();
  }

  async mustResource(apiVersion: string, kind: string): Promise<ApiResource> {
    const r = await this.resourceFor(apiVersion, kind);
    if (!r) {
      throw new KubeApiError(
        `the cluster does not serve kind ${kind} in ${apiVersion} (is its CustomResourceDefinition installed?)`,
        404,
        "NotFound",
        "GET",
        apiVersion,
      );
    }
    return r;
  }

  collectionPath(r: ApiResource, namespace?: string): string {
    const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    return r.namespaced && namespace
      ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.name}`
      : `${base}/${r.name}`;
  }

  objectPath(r: ApiResource, namespace: string | undefined, name: string): string {
    return `${this.collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
  }

  // ---- verbs ----

  /** Server-side apply as field manager `syncward`; `dryRun` asks the server what the object would become. */
  async apply(
    obj: KubeObject,
    options: { dryRun?: boolean; force?: boolean; fieldValidation?: "Strict" | "Warn" | "Ignore" } = {},
  ): Promise<KubeObject> {
    const r = await this.mustResource(obj.apiVersion, obj.kind);
    const q = new URLSearchParams({ fieldManager: FIELD_MANAGER });
    if (options.fieldValidation) q.set("fieldValidation", options.fieldValidation);
    if (options.force ?? true) q.set("force", "true");
    if (options.dryRun) q.set("dryRun", "All");
    return this.request<KubeObject>(
      "PATCH",
      `${this.objectPath(r, obj.metadata.namespace, obj.metadata.name)}?${q}`,
      {
        body: obj,
        contentType: "application/apply-patch+yaml",
      },
    );
  }

  /**
   * A server-side dry-run apply whose answer is only its verdict: it resolves when the API server
   * would accept `obj` and rejects as `apply` does; the would-be object is not read (a sync's
   * up-front dry run of every write needs no more, and parsing 1,000 answers costs the client CPU
   * the API server shares on small machines).
   */
  async dryRunApply(obj: KubeObject, fieldValidation?: "Strict" | "Warn" | "Ignore"): Promise<void> {
    const r = await this.mustResource(obj.apiVersion, obj.kind);
    const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, force: "true", dryRun: "All" });
    if (fieldValidation) q.set("fieldValidation", fieldValidation);
    await this.request<undefined>(
      "PATCH",
      `${this.objectPath(r, obj.metadata.namespace, obj.metadata.name)}?${q}`,
      { body: obj, contentType: "application/apply-patch+yaml", discardBody: true },
    );
  }

  async get(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<KubeObject | undefined> {
    const r = await this.mustResource(apiVersion, kind);
    try {
      return await this.request<KubeObject>("GET", this.objectPath(r, namespace, name));
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Lists across all namespaces when `namespace` is undefined. Items get apiVersion and kind filled in. */
  async list(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const r = await this.mustResource(apiVersion, kind);
    const items: KubeObject[] = [];
    let resourceVersion = "";
    let cont: string | undefined;
    do {
      const q = new URLSearchParams({ limit: "500" });
      if (options.labelSelector) q.set("labelSelector", options.labelSelector);
      if (options.fieldSelector) q.set("fieldSelector", options.fieldSelector);
      if (cont) q.set("continue", cont);
      const page = await this.request<{
        items: KubeObject[];
        metadata: { continue?: string; resourceVersion: string };
      }>("GET", `${this.collectionPath(r, options.namespace)}?${q}`);
      for (const item of page.items) items.push({ ...item, apiVersion, kind });
      resourceVersion = page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  /**
   * `uid`: delete only that object (a precondition), never another one of the same name: a 409
   * when the name now belongs to another. `resourceVersion`: only as it was read (a 409 when it
   * changed since).
   */
  async delete(
    key: ResourceKey & { apiVersion: string },
    propagation: Propagation = "foreground",
    uid?: string,
    resourceVersion?: string,
  ): Promise<boolean> {
    const r = await this.mustResource(key.apiVersion, key.kind);
    const policy = { foreground: "Foreground", background: "Background", orphan: "Orphan" }[propagation];
    const preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
    try {
      await this.request("DELETE", this.objectPath(r, key.namespace || undefined, key.name), {
        body: {
          kind: "DeleteOptions",
          apiVersion: "v1",
          propagationPolicy: policy,
          ...(uid || resourceVersion ? { preconditions } : {}),
        },
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return false;
      throw err;
    }
  }

  async create(obj: KubeObject): Promise<KubeObject> {
    const r = await this.mustResource(obj.apiVersion, obj.kind);
    return this.request<KubeObject>(
      "POST",
      `${this.collectionPath(r, obj.metadata.namespace)}?fieldManager=${FIELD_MANAGER}`,
      {
        body: obj,
      },
    );
  }

  async replace(obj: KubeObject): Promise<KubeObject> {
    const r = await this.mustResource(obj.apiVersion, obj.kind);
    return this.request<KubeObject>(
      "PUT",
      `${this.objectPath(r, obj.metadata.namespace, obj.metadata.name)}?fieldManager=${FIELD_MANAGER}`,
      { body: obj },
    );
  }

  /**
   * The watch request: over HTTP/2 when the server speaks it (no proxy-url), so that the hundreds
   * of watches of many environments share a few connections; otherwise over HTTP/1.1.
   */
  private openWatch(
    url: URL,
    auth: RequestOptions,
    onResponse: (res: IncomingMessage) => void,
  ): WatchRequest {
    const headers = { ...(auth.headers as Record<string, string | string[]>), Accept: "application/json" };
    if (this.http2 && !this.http2.unavailable && !this.proxyAgent) {
      const { headers: _h, ...tls } = auth as RequestOptions & SecureClientSessionOptions;
      return this.http2.get(
        `${url.pathname}${url.search}`,
        headers,
        tls,
        onResponse as unknown as (r: Http2Response) => void,
      );
    }
    const send = url.protocol === "http:" ? httpRequest : httpsRequest;
    return send(
      url,
      { ...auth, method: "GET", agent: this.watchProxyAgent ?? this.watchAgent, headers },
      onResponse,
    );
  }

  /**
   * Streams watch events until the server closes the stream or `signal` aborts. Resolves with the
   * last resourceVersion seen, so the caller can resume; rejects with a 410 KubeApiError when that
   * version is too old and the caller must re-list.
   */
  async watch(
    apiVersion: string,
    kind: string,
    options: {
      namespace?: string;
      resourceVersion: string;
      labelSelector?: string;
      signal?: AbortSignal;
      /** How long the server keeps the stream open (default 300). */
      timeoutSeconds?: number;
    },
    onEvent: (type: "ADDED" | "MODIFIED" | "DELETED", obj: KubeObject) => void,
  ): Promise<string> {
    const r = await this.mustResource(apiVersion, kind);
    const auth = await this.authOptions();
    const q = new URLSearchParams({
      watch: "1",
      allowWatchBookmarks: "true",
      resourceVersion: options.resourceVersion,
      timeoutSeconds: String(options.timeoutSeconds ?? 300),
    });
    if (options.labelSelector) q.set("labelSelector", options.labelSelector);
    const url = new URL(`${this.collectionPath(r, options.namespace)}?${q}`, this.server);
    this.counts.requests++;
    this.counts.byVerb.WATCH = (this.counts.byVerb.WATCH ?? 0) + 1;
    let last = options.resourceVersion;
    // Removed once the watch ends: callers re-watch with one signal for as long as they run, and
    // each listener left behind would keep its finished request alive.
    let onAbort: (() => void) | undefined;
    const watching = new Promise<string>((resolve, reject) => {
      let answered = false;
      const req = this.openWatch(url, auth, (res) => {
        answered = true;
        countCode(this.counts, "WATCH", res.statusCode ?? 0);
        this.reachability.answered();
        if ((res.statusCode ?? 0) >= 300) {
          let text = "";
          res.on("data", (c) => {
            text += c;
          });
          res.on("end", () =>
            reject(new KubeApiError(text.slice(0, 300), res.statusCode ?? 0, "", "WATCH", url.pathname)),
          );
          return;
        }
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          let nl = buffer.indexOf("\n");
          while (nl >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            nl = buffer.indexOf("\n");
            if (!line.trim()) continue;
            const ev = JSON.parse(line) as {
              type: string;
              object: KubeObject & { code?: number; message?: string };
            };
            if (ev.type === "ERROR") {
              req.destroy();
              reject(
                new KubeApiError(
                  ev.object.message ?? "watch error",
                  ev.object.code ?? 500,
                  "Expired",
                  "WATCH",
                  url.pathname,
                ),
              );
              return;
            }
            last = ev.object.metadata?.resourceVersion ?? last;
            if (ev.type === "BOOKMARK") continue;
            onEvent(ev.type as "ADDED" | "MODIFIED" | "DELETED", { ...ev.object, apiVersion, kind });
          }
        });
        res.on("end", () => resolve(last));
        res.on("error", () => resolve(last));
      });
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (options.signal?.aborted) return resolve(last);
        if (!answered) countCode(this.counts, "WATCH", "error");
        reject(new KubeConnectionError(`watch ${kind}: ${err.message}`, err.code));
      });
      onAbort = () => req.destroy();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      req.end();
    });
    return watching.finally(() => {
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    });
  }
}
