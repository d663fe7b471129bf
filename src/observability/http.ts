// Health, readiness and metrics endpoints as one Node request handler. It follows Probot 14's
// handler contract: return true when the request was answered, false to let the next handler
// (finally Probot's 404) take it. Register it from the app function:
//
//   export default (app: Probot, { addHandler }: ApplicationFunctionOptions) => {
//     addHandler(healthHandler({ metrics, ready: () => reconciler.ready }));
//   };
//
// Probot puts its webhook middleware first, so these paths never shadow the webhook path.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Metrics } from "./metrics.ts";

export interface HealthHandlerOptions {
  metrics: Pick<Metrics, "registry">;
  /** True once the app can do its work (e.g. the cluster answered and the reconciler started). */
  ready: () => boolean;
}

export type HealthHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const PATHS = new Set(["/metrics", "/healthz", "/readyz"]);

export function healthHandler(opts: HealthHandlerOptions): HealthHandler {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (!PATHS.has(path)) return false;
    const method = req.method ?? "GET";
    if (method !== "GET" && method !== "HEAD") {
      send(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
      return true;
    }
    if (path === "/healthz") {
      // Liveness: the event loop answers. Never depends on GitHub or the cluster, so an outage
      // there does not make Kubernetes restart every replica.
      send(res, 200, "ok\n");
    } else if (path === "/readyz") {
      let ready = false;
      try {
        ready = opts.ready();
      } catch {
        ready = false;
      }
      send(res, ready ? 200 : 503, ready ? "ready\n" : "not ready\n");
    } else {
      const { registry } = opts.metrics;
      // The registry collects asynchronously; the request counts as handled from here on.
      registry.metrics().then(
        (text) => send(res, 200, text, { "content-type": registry.contentType }),
        (err: unknown) => send(res, 500, `metrics collection failed: ${String(err)}\n`),
      );
    }
    return true;
  };
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(res.req?.method === "HEAD" ? undefined : body);
}
