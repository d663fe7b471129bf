// The API server's own limit for the cold-sync benchmark, sent by the leanest client there is: plain
// https with keep-alive, N requests in flight, bodies serialized before the clock starts, responses
// drained unparsed. Two forms: the bench's objects as plain server-side-apply PATCHes, without
// discovery or reads (`rawApply`), and a replay of every request a syncward sync sent (`rawReplay`:
// its discovery and reads, its dry runs, its query, its bodies with their tracking metadata).
// Anything syncward does beyond the replay costs it the difference.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import { performance } from "node:perf_hooks";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "../src/kube/object.ts";

/**
 * Sent in kind order, Deployments last, as syncward (and kubectl, Argo CD) order them: a Deployment
 * sent early makes the controllers create ReplicaSets and Pods while the rest is still being
 * written, on the same 2-core API server, and the "limit" would pay for that churn.
 */
const KIND_ORDER = ["ServiceAccount", "Secret", "ConfigMap", "Service", "Deployment"];

const PLURALS: Record<string, string> = {
  "v1/ConfigMap": "configmaps",
  "v1/Secret": "secrets",
  "v1/Service": "services",
  "v1/ServiceAccount": "serviceaccounts",
  "apps/v1/Deployment": "deployments",
};

export interface RawApplyRun {
  ms: number;
  concurrency: number;
  writes: number;
  /** Responses other than 2xx (the run still counts them; there should be none). */
  failures: number;
}

function pathOf(obj: KubeObject, namespace: string): string {
  const plural = PLURALS[`${obj.apiVersion}/${obj.kind}`];
  if (!plural) throw new Error(`raw apply: no path for ${obj.apiVersion} ${obj.kind}`);
  const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  return `${base}/namespaces/${namespace}/${plural}/${obj.metadata.name}?fieldManager=bench-raw&force=true`;
}

/** One request as a client sent it: the body already serialized, the namespace as a placeholder. */
export interface RecordedRequest {
  method: string;
  /** Path and query, with the namespace written as NAMESPACE. */
  path: string;
  body: string;
  contentType: string;
}

/** Stands for the namespace in recorded requests, so one recording replays into any namespace. */
export const NAMESPACE = "@namespace@";

/**
 * Applies `objects` into `namespace` with `concurrency` requests in flight; resolves when all
 * answered.
 */
export function rawApply(
  kubeconfig: string,
  objects: KubeObject[],
  namespace: string,
  concurrency: number,
): Promise<RawApplyRun> {
  const ordered = [...objects].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  const applies = ordered.map((o) => ({
    method: "PATCH",
    path: pathOf(o, namespace),
    body: Buffer.from(JSON.stringify({ ...o, metadata: { ...o.metadata, namespace } })),
    contentType: "application/apply-patch+yaml",
  }));
  return send(kubeconfig, concurrency, [applies]);
}

/**
 * Sends exactly the requests syncward sent in a recorded sync (same paths and query, same bodies,
 * same order), replayed into `namespace`, in the phases a sync has: its reads (discovery and lists)
 * first, then its dry runs, all answered before the first write as syncward's are, then the writes,
 * back to back with no waits between kinds. The limit of the same requests, which the cold sync's
 * ">= 0.9" target is measured against. The reads go out all at once, although syncward discovers
 * before it lists: if anything, the replay is the faster for it.
 */
export function rawReplay(
  kubeconfig: string,
  recorded: RecordedRequest[],
  namespace: string,
  concurrency: number,
): Promise<RawApplyRun> {
  const requests = recorded.map((r) => ({
    method: r.method,
    path: r.path.replaceAll(NAMESPACE, namespace),
    body: Buffer.from(r.body.replaceAll(NAMESPACE, namespace)),
    contentType: r.contentType,
  }));
  const isRead = (r: { method: string }) => r.method === "GET";
  const isDryRun = (r: { path: string }) => new URL(r.path, "http://x").searchParams.has("dryRun");
  const writes = requests.filter((r) => !isRead(r));
  return send(kubeconfig, concurrency, [
    requests.filter(isRead),
    writes.filter(isDryRun),
    writes.filter((r) => !isDryRun(r)),
  ]);
}

interface RawRequest {
  method: string;
  path: string;
  body: Buffer;
  contentType: string;
}

/** Sends each phase's requests, `concurrency` in flight, once the phase before is answered. */
async function send(kubeconfig: string, concurrency: number, phases: RawRequest[][]): Promise<RawApplyRun> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const server = new URL(kc.getCurrentCluster()?.server ?? "");
  const auth: RequestOptions = {};
  await kc.applyToHTTPSOptions(auth);
  const plain = server.protocol === "http:";
  const agent = plain
    ? new HttpAgent({ keepAlive: true, maxSockets: concurrency })
    : new HttpsAgent({ keepAlive: true, maxSockets: concurrency });
  const one = (r: RawRequest) =>
    new Promise<number>((resolve, reject) => {
      const req = (plain ? httpRequest : httpsRequest)(
        new URL(r.path, server),
        {
          ...auth,
          agent,
          method: r.method,
          headers: {
            ...(auth.headers ?? {}),
            Accept: "application/json",
            "Content-Type": r.contentType,
            "Content-Length": r.body.length,
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(r.body);
    });
  let failures = 0;
  const sendAll = async (requests: RawRequest[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, requests.length) }, async () => {
        while (next < requests.length) {
          const r = requests[next++]!;
          const status = await one(r);
          // A read of what does not exist yet answers 404 to syncward too.
          if ((status < 200 || status >= 300) && !(r.method === "GET" && status === 404)) failures++;
        }
      }),
    );
  };
  const start = performance.now();
  try {
    for (const phase of phases) if (phase.length > 0) await sendAll(phase);
    const writes = phases.flat().filter((r) => r.method !== "GET").length;
    return { ms: performance.now() - start, concurrency, writes, failures };
  } finally {
    agent.destroy();
  }
}
