// The API server's own limit for the cold-sync benchmark: the same objects sent as server-side-apply
// PATCH requests by the leanest client there is. Plain https with keep-alive, N requests in flight,
// bodies serialized before the clock starts, responses drained unparsed, no discovery (the bench's
// five kinds have fixed paths), no reads. Anything syncward does beyond this costs it the difference.
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

/**
 * Applies `objects` into `namespace` with `concurrency` requests in flight; resolves when all
 * answered. With `dryRunFirst`, every object is first sent as a server-side dry run (`dryRun=All`)
 * and only then applied: the requests syncward itself sends (it dry-runs every write before the
 * first one, as Argo CD does), so the limit is measured for the same work.
 */
export async function rawApply(
  kubeconfig: string,
  objects: KubeObject[],
  namespace: string,
  concurrency: number,
  dryRunFirst = false,
): Promise<RawApplyRun> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const server = new URL(kc.getCurrentCluster()?.server ?? "");
  const auth: RequestOptions = {};
  await kc.applyToHTTPSOptions(auth);
  const plain = server.protocol === "http:";
  const agent = plain
    ? new HttpAgent({ keepAlive: true, maxSockets: concurrency })
    : new HttpsAgent({ keepAlive: true, maxSockets: concurrency });
  const ordered = [...objects].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  const applies = ordered.map((o) => {
    const body = Buffer.from(JSON.stringify({ ...o, metadata: { ...o.metadata, namespace } }));
    return { path: pathOf(o, namespace), body };
  });
  const dryRuns = dryRunFirst ? applies.map((r) => ({ ...r, path: `${r.path}&dryRun=All` })) : [];
  const headers = { ...(auth.headers ?? {}), "Content-Type": "application/apply-patch+yaml" };
  const send = (path: string, body: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const req = (plain ? httpRequest : httpsRequest)(
        new URL(path, server),
        { ...auth, agent, method: "PATCH", headers: { ...headers, "Content-Length": body.length } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  let failures = 0;
  const sendAll = async (requests: Array<{ path: string; body: Buffer }>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, requests.length) }, async () => {
        while (next < requests.length) {
          const r = requests[next++]!;
          const status = await send(r.path, r.body);
          if (status < 200 || status >= 300) failures++;
        }
      }),
    );
  };
  const start = performance.now();
  try {
    if (dryRuns.length > 0) await sendAll(dryRuns);
    await sendAll(applies);
    return { ms: performance.now() - start, concurrency, writes: applies.length, failures };
  } finally {
    agent.destroy();
  }
}
