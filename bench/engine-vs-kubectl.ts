// Benchmark 1: the sync engine against `kubectl apply --server-side` on 1,000 objects, cold (into an
// empty namespace) and again with nothing changed, in one run against the same API server. Each
// trial gets two fresh namespaces (one per tool); the order of the tools alternates between trials;
// between measurements the Deployments are left to roll out so neither tool pays for the other's
// pod churn. Both tools read the same YAML files: the engine's time includes rendering them.
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import type { EnvironmentConfig } from "../src/config/types.ts";
import type { KindRef } from "../src/engine/live.ts";
import { syncEnvironment } from "../src/engine/sync.ts";
import { render } from "../src/source/render.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  kubectl,
  median,
  ms,
  Namespaces,
  progress,
  ratio,
  waitDeploymentsReady,
} from "./support.ts";

const APPS = Number(process.env.SYNCWARD_BENCH_APPS ?? 200);
const TRIALS = Number(process.env.SYNCWARD_BENCH_TRIALS ?? 3);
const REVISION = "b".repeat(40);

interface EngineRun {
  ms: number;
  renderMs: number;
  syncMs: number;
  /** User + system CPU time of this process during the run. */
  cpuMs: number;
  phase: string;
  message: string;
  writes: number;
  requests: number;
  byVerb: Record<string, number>;
  inventory: KindRef[];
}

interface KubectlRunResult {
  ms: number;
  cpuMs?: number;
  maxRssKiB?: number;
  /** From its -v=6 log: time from its first log line to its first write (discovery, OpenAPI). */
  beforeFirstWriteMs?: number;
  /** Sum of the request durations it logged (it sends one request at a time). */
  requestMs: number;
  writes: number;
  requests: number;
  byVerb: Record<string, number>;
}

function envFor(namespace: string): EnvironmentConfig {
  const yaml = stringify({
    environments: [{ name: "bench", source: { path: "." }, destination: { namespace } }],
  });
  const env = parseConfig(yaml).environments[0];
  if (!env) throw new Error("parseConfig returned no environment");
  return env;
}

/** A cold process's view: a new client (empty discovery cache), the files rendered from disk. */
async function runEngine(ctx: BenchContext, dir: string, namespace: string, inventory?: KindRef[]) {
  const kube = client(ctx);
  try {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const rendered = await render(dir, ".");
    const renderedAt = performance.now();
    const result = await syncEnvironment(
      kube,
      { instance: `bench.${namespace}`, env: envFor(namespace) },
      { revision: REVISION, objects: rendered.objects, prune: false, inventory },
    );
    const end = performance.now();
    const used = process.cpuUsage(cpu);
    const run: EngineRun = {
      cpuMs: (used.user + used.system) / 1000,
      ms: end - start,
      renderMs: renderedAt - start,
      syncMs: end - renderedAt,
      phase: result.phase,
      message: result.message,
      writes: result.writes,
      requests: kube.counts.requests,
      byVerb: { ...kube.counts.byVerb },
      inventory: result.inventory,
    };
    if (result.phase !== "Succeeded")
      progress(`engine sync into ${namespace}: ${result.phase}: ${result.message}`);
    return run;
  } finally {
    kube.close();
  }
}

const REQUEST_LINE =
  /round_trippers\.go:\d+\] (GET|PATCH|POST|PUT|DELETE) https?:\/\/\S+ .* in (\d+) milliseconds/;
/** klog's `I1129 18:30:31.040073` prefix, as ms since midnight. */
const KLOG_TIME = /^[IWE]\d{4} (\d{2}):(\d{2}):(\d{2})\.(\d{6})/;

function klogMs(line: string): number | undefined {
  const m = KLOG_TIME.exec(line);
  if (!m) return undefined;
  const [h, min, sec, micros] = m.slice(1).map(Number) as [number, number, number, number];
  return ((h * 60 + min) * 60 + sec) * 1000 + micros / 1000;
}
const WRITE_VERBS = new Set(["PATCH", "POST", "PUT", "DELETE"]);

async function runKubectl(ctx: BenchContext, dir: string, namespace: string): Promise<KubectlRunResult> {
  const run = await kubectl(ctx, [
    "apply",
    "--server-side",
    "--field-manager=bench",
    "-n",
    namespace,
    "-R",
    "-f",
    dir,
    "-v=6",
  ]);
  const byVerb: Record<string, number> = {};
  let requestMs = 0;
  let firstLine: number | undefined;
  let firstWrite: number | undefined;
  for (const line of run.stderr.split("\n")) {
    firstLine ??= klogMs(line);
    const m = REQUEST_LINE.exec(line);
    if (!m) continue;
    const verb = m[1] as string;
    byVerb[verb] = (byVerb[verb] ?? 0) + 1;
    requestMs += Number(m[2]);
    if (WRITE_VERBS.has(verb)) firstWrite ??= klogMs(line);
  }
  const count = (verbs: string[]) => verbs.reduce((sum, v) => sum + (byVerb[v] ?? 0), 0);
  return {
    ms: run.ms,
    cpuMs: run.cpuMs,
    maxRssKiB: run.maxRssKiB,
    beforeFirstWriteMs:
      firstLine !== undefined && firstWrite !== undefined ? firstWrite - firstLine : undefined,
    requestMs,
    writes: count([...WRITE_VERBS]),
    requests: count(["GET", ...WRITE_VERBS]),
    byVerb,
  };
}

interface Trial {
  order: string;
  engine: { cold: EngineRun; noop: EngineRun };
  kubectl: { cold: KubectlRunResult; noop: KubectlRunResult };
}

async function trial(ctx: BenchContext, dir: string, index: number): Promise<Trial> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-eng");
  try {
    const engineNs = await namespaces.create("syncward");
    const kubectlNs = await namespaces.create("kubectl");
    const engineFirst = index % 2 === 0;
    const settle = (ns: string) => waitDeploymentsReady(admin, ns);
    const engineSide = async () => {
      const cold = await runEngine(ctx, dir, engineNs);
      await settle(engineNs);
      const noop = await runEngine(ctx, dir, engineNs, cold.inventory);
      return { cold, noop };
    };
    const kubectlSide = async () => {
      const cold = await runKubectl(ctx, dir, kubectlNs);
      await settle(kubectlNs);
      const noop = await runKubectl(ctx, dir, kubectlNs);
      return { cold, noop };
    };
    let engine: Trial["engine"];
    let kubectlResult: Trial["kubectl"];
    if (engineFirst) {
      engine = await engineSide();
      kubectlResult = await kubectlSide();
    } else {
      kubectlResult = await kubectlSide();
      engine = await engineSide();
    }
    progress(
      `trial ${index + 1}: syncward cold ${ms(engine.cold.ms)} (${engine.cold.writes} writes), no-op ${ms(engine.noop.ms)} (${engine.noop.writes} writes); ` +
        `kubectl cold ${ms(kubectlResult.cold.ms)} (${kubectlResult.cold.writes} writes), no-op ${ms(kubectlResult.noop.ms)} (${kubectlResult.noop.writes} writes)`,
    );
    return { order: engineFirst ? "syncward first" : "kubectl first", engine, kubectl: kubectlResult };
  } finally {
    await namespaces.removeAll();
    admin.close();
  }
}

export async function engineVsKubectl(ctx: BenchContext): Promise<BenchResult> {
  const objects = APPS * KINDS_PER_APP;
  const dir = writeManifests(APPS);
  progress(`engine vs kubectl: ${objects} objects in ${dir}, ${TRIALS} trials`);
  const trials: Trial[] = [];
  try {
    for (let i = 0; i < TRIALS; i++) trials.push(await trial(ctx, dir, i));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = (pick: (t: Trial) => number) => median(trials.map(pick));
  const summary = {
    objects,
    trials: TRIALS,
    engineColdMs: m((t) => t.engine.cold.ms),
    engineColdRenderMs: m((t) => t.engine.cold.renderMs),
    engineColdCpuMs: m((t) => t.engine.cold.cpuMs),
    engineColdWrites: m((t) => t.engine.cold.writes),
    engineColdRequests: m((t) => t.engine.cold.requests),
    engineNoopMs: m((t) => t.engine.noop.ms),
    engineNoopWrites: m((t) => t.engine.noop.writes),
    engineNoopRequests: m((t) => t.engine.noop.requests),
    engineNoopCpuMs: m((t) => t.engine.noop.cpuMs),
    kubectlColdMs: m((t) => t.kubectl.cold.ms),
    kubectlColdCpuMs: m((t) => t.kubectl.cold.cpuMs ?? Number.NaN),
    kubectlColdRequestMs: m((t) => t.kubectl.cold.requestMs),
    kubectlColdBeforeFirstWriteMs: m((t) => t.kubectl.cold.beforeFirstWriteMs ?? Number.NaN),
    kubectlColdWrites: m((t) => t.kubectl.cold.writes),
    kubectlColdRequests: m((t) => t.kubectl.cold.requests),
    kubectlNoopMs: m((t) => t.kubectl.noop.ms),
    kubectlNoopCpuMs: m((t) => t.kubectl.noop.cpuMs ?? Number.NaN),
    kubectlNoopWrites: m((t) => t.kubectl.noop.writes),
    kubectlNoopRequests: m((t) => t.kubectl.noop.requests),
  };
  const name = `engine vs kubectl (${objects} objects, median of ${TRIALS})`;
  const s = summary;
  const rows = [
    {
      benchmark: name,
      metric: "cold sync, wall time",
      value: ms(s.engineColdMs),
      kubectl: ms(s.kubectlColdMs),
      ratio: ratio(s.kubectlColdMs, s.engineColdMs),
    },
    {
      benchmark: name,
      metric: "cold sync, CPU time of the client",
      value: ms(s.engineColdCpuMs),
      kubectl: ms(s.kubectlColdCpuMs),
    },
    {
      benchmark: name,
      metric: "cold sync, writes",
      value: String(s.engineColdWrites),
      kubectl: String(s.kubectlColdWrites),
    },
    {
      benchmark: name,
      metric: "cold sync, API requests",
      value: String(s.engineColdRequests),
      kubectl: String(s.kubectlColdRequests),
    },
    {
      benchmark: name,
      metric: "nothing changed, wall time",
      value: ms(s.engineNoopMs),
      kubectl: ms(s.kubectlNoopMs),
      ratio: ratio(s.kubectlNoopMs, s.engineNoopMs),
    },
    {
      benchmark: name,
      metric: "nothing changed, CPU time of the client",
      value: ms(s.engineNoopCpuMs),
      kubectl: ms(s.kubectlNoopCpuMs),
    },
    {
      benchmark: name,
      metric: "nothing changed, writes",
      value: String(s.engineNoopWrites),
      kubectl: String(s.kubectlNoopWrites),
    },
    {
      benchmark: name,
      metric: "nothing changed, API requests",
      value: String(s.engineNoopRequests),
      kubectl: String(s.kubectlNoopRequests),
    },
  ];
  const stripInventory = (r: EngineRun) => ({ ...r, inventory: undefined });
  return {
    rows,
    data: {
      summary,
      trials: trials.map((t) => ({
        ...t,
        engine: { cold: stripInventory(t.engine.cold), noop: stripInventory(t.engine.noop) },
      })),
    },
  };
}
