// Benchmarks 1 and 2: a cold sync of 1,000 objects into an empty namespace, and the same sync again
// with nothing changed, side by side with `kubectl apply --server-side` and with the API server's
// own limit (raw-apply.ts: plain server-side-apply PATCHes, and a replay of syncward's own requests),
// on the same API server in one run.
// Each pair makes a fresh namespace per side and runs syncward, raw and kubectl one after the other
// (syncward and raw swap places every other pair); between measurements the Deployments are left
// to roll out, so no side pays for another's pod churn. All start from the same YAML files: the
// engine's time includes rendering them and discovery (a new client), as kubectl's does; the raw
// client gets the requests already built and serialized.
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import type { EnvironmentConfig } from "../src/config/types.ts";
import type { KindRef } from "../src/engine/live.ts";
import { syncEnvironment } from "../src/engine/sync.ts";
import type { KubeClient } from "../src/kube/client.ts";
import type { KubeObject } from "../src/kube/object.ts";
import { render } from "../src/source/render.ts";
import { type KubectlApply, kubectlApply } from "./kubectl-apply.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import { NAMESPACE, type RawApplyRun, type RecordedRequest, rawApply, rawReplay } from "./raw-apply.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  type Measurement,
  median,
  ms,
  Namespaces,
  progress,
  waitDeploymentsReady,
} from "./support.ts";

const REVISION = "b".repeat(40);

export interface EngineRun {
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

function envFor(namespace: string): EnvironmentConfig {
  const yaml = stringify({
    environments: [{ name: "bench", source: { path: "." }, destination: { namespace } }],
  });
  const env = parseConfig(yaml).environments[0];
  if (!env) throw new Error("parseConfig returned no environment");
  return env;
}

/**
 * A view of `kube` that also writes down every request it sends (discovery, reads, dry runs and
 * writes; a watch has no end to replay), as sent (the namespace as a placeholder), for the raw
 * client to replay.
 */
function recording(kube: KubeClient, namespace: string, into: RecordedRequest[]): KubeClient {
  const view = Object.create(kube) as KubeClient;
  view.request = (method, path, options = {}) => {
    if (!/[?&]watch=(true|1)\b/.test(path))
      into.push({
        method,
        path: path.replaceAll(namespace, NAMESPACE),
        body: options.body === undefined ? "" : JSON.stringify(options.body).replaceAll(namespace, NAMESPACE),
        contentType: options.contentType ?? "application/json",
      });
    return kube.request(method, path, options);
  };
  return view;
}

/**
 * A cold process's view: a new client (empty discovery cache), the files rendered from disk. With
 * `record`, the requests it sends are written down there.
 */
export async function runEngine(
  ctx: BenchContext,
  dir: string,
  namespace: string,
  inventory?: KindRef[],
  record?: RecordedRequest[],
) {
  const own = client(ctx);
  const kube = record ? recording(own, namespace, record) : own;
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
    own.close();
  }
}

/** The requests one cold sync of `dir` sends (untimed, into a namespace of its own, removed after). */
async function recordSync(ctx: BenchContext, dir: string): Promise<RecordedRequest[]> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-record");
  try {
    const ns = await namespaces.create("syncward");
    const recorded: RecordedRequest[] = [];
    const run = await runEngine(ctx, dir, ns, undefined, recorded);
    if (run.phase !== "Succeeded") throw new Error(`the recorded sync ${run.phase}: ${run.message}`);
    await waitDeploymentsReady(admin, ns);
    return recorded;
  } finally {
    await namespaces.removeAll();
    admin.close();
  }
}

interface Pair {
  order: string[];
  loadAverage: { start: number[]; end: number[] };
  syncward: { cold: EngineRun; noop: EngineRun };
  raw: RawApplyRun;
  /** The same requests as syncward sends, replayed: a dry run of every object, then the applies. */
  rawSame: RawApplyRun;
  kubectl: { cold: KubectlApply; noop: KubectlApply };
}

const strip = (r: EngineRun) => ({ ...r, inventory: undefined });

async function pair(
  ctx: BenchContext,
  dir: string,
  objects: KubeObject[],
  recorded: RecordedRequest[],
  concurrency: number,
  index: number,
): Promise<Pair> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-sync");
  try {
    const ns = {
      syncward: await namespaces.create("syncward"),
      raw: await namespaces.create("raw"),
      rawSame: await namespaces.create("rawsame"),
      kubectl: await namespaces.create("kubectl"),
    };
    const settle = (namespace: string) => waitDeploymentsReady(admin, namespace);
    const order =
      index % 2 === 0 ? ["syncward", "raw", "rawSame", "kubectl"] : ["rawSame", "raw", "syncward", "kubectl"];
    const start = loadavg();
    const p: Partial<Pair> = {};
    for (const side of order) {
      if (side === "syncward") {
        const cold = await runEngine(ctx, dir, ns.syncward);
        await settle(ns.syncward);
        p.syncward = { cold, noop: await runEngine(ctx, dir, ns.syncward, cold.inventory) };
      } else if (side === "raw") {
        p.raw = await rawApply(ctx.kubeconfig, objects, ns.raw, concurrency);
        await settle(ns.raw);
      } else if (side === "rawSame") {
        p.rawSame = await rawReplay(ctx.kubeconfig, recorded, ns.rawSame, concurrency);
        await settle(ns.rawSame);
      } else {
        const cold = await kubectlApply(ctx, dir, ns.kubectl, true);
        await settle(ns.kubectl);
        p.kubectl = { cold, noop: await kubectlApply(ctx, dir, ns.kubectl, true) };
      }
    }
    const done = { ...p, order, loadAverage: { start, end: loadavg() } } as Pair;
    progress(
      `pair ${index + 1}: cold syncward ${ms(done.syncward.cold.ms)}, raw ${ms(done.raw.ms)}, raw same requests ${ms(done.rawSame.ms)}, kubectl ${ms(done.kubectl.cold.ms)}; ` +
        `no-op syncward ${ms(done.syncward.noop.ms)} (${done.syncward.noop.writes} writes), kubectl ${ms(done.kubectl.noop.ms)} (${done.kubectl.noop.writes} writes); load ${start[0]?.toFixed(2)}`,
    );
    return done;
  } finally {
    await namespaces.removeAll();
    admin.close();
  }
}

/**
 * Raw runs at each concurrency, each into a fresh namespace removed after it, in two passes (ascending, then
 * descending, so no concurrency always runs on a fresher or a busier server); the concurrency
 * with the lowest mean is the limit the pairs use.
 */
async function calibrate(
  ctx: BenchContext,
  objects: KubeObject[],
  candidates: number[],
): Promise<{ runs: RawApplyRun[]; best: number }> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-raw");
  const runs: RawApplyRun[] = [];
  try {
    for (const c of [...candidates, ...[...candidates].reverse()]) {
      const ns = await namespaces.create(`c${c}`);
      const run = await rawApply(ctx.kubeconfig, objects, ns, c);
      runs.push(run);
      progress(`raw PATCH, ${c} in flight: ${ms(run.ms)}${run.failures ? `, ${run.failures} failed` : ""}`);
      // Each run's 200 Pods go before the next: the kwok node holds 1,000, and the next run would
      // otherwise meet a server still busy with the previous one's.
      await waitDeploymentsReady(admin, ns);
      await namespaces.remove([ns]);
    }
  } finally {
    await namespaces.removeAll();
    admin.close();
  }
  const mean = (c: number) => {
    const of = runs.filter((r) => r.concurrency === c);
    return of.reduce((sum, r) => sum + r.ms, 0) / of.length;
  };
  const best = candidates.reduce((a, b) => (mean(b) < mean(a) ? b : a));
  return { runs, best };
}

/** syncward against a baseline, pair by pair; the ratio is baseline time / syncward time per pair. */
function sideBySide(
  name: string,
  ours: number[],
  theirs: number[],
  o: {
    baseline: string;
    meaning: string;
    target: string;
    atLeast: number;
    details: Record<string, unknown>;
  },
): Measurement {
  const ratios = ours.map((v, i) => (theirs[i] ?? Number.NaN) / v);
  return {
    name,
    unit: "ms",
    syncward: median(ours),
    baseline: { name: o.baseline, value: median(theirs) },
    ratio: median(ratios),
    ratioMeaning: o.meaning,
    target: o.target,
    met: median(ratios) >= o.atLeast,
    samples: { syncward: ours, baseline: theirs, ratio: ratios },
    details: o.details,
  };
}

export async function coldSync(ctx: BenchContext): Promise<BenchResult> {
  const apps = Number(process.env.SYNCWARD_BENCH_APPS ?? (ctx.quick ? 20 : 200));
  const pairs = Number(process.env.SYNCWARD_BENCH_PAIRS ?? (ctx.quick ? 3 : 5));
  const candidates = ctx.quick ? [8, 16, 32] : [8, 16, 32, 64];
  const count = apps * KINDS_PER_APP;
  const dir = writeManifests(apps);
  progress(`cold sync: ${count} objects in ${dir}, ${pairs} pairs`);
  const runs: Pair[] = [];
  let calibration: RawApplyRun[];
  let recordedCount = 0;
  try {
    const objects = (await render(dir, ".")).objects;
    const recorded = await recordSync(ctx, dir);
    recordedCount = recorded.length;
    progress(`recorded syncward's ${recorded.length} requests (reads, dry runs, writes) for the raw replay`);
    const calibrated = await calibrate(ctx, objects, candidates);
    calibration = calibrated.runs;
    progress(`raw PATCH: fastest with ${calibrated.best} in flight`);
    for (let i = 0; i < pairs; i++) runs.push(await pair(ctx, dir, objects, recorded, calibrated.best, i));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const concurrency = runs[0]?.raw.concurrency;
  const col = (pick: (p: Pair) => number) => runs.map(pick);
  const cold = col((p) => p.syncward.cold.ms);
  const kubectlCold = col((p) => p.kubectl.cold.ms);
  const raw = col((p) => p.raw.ms);
  const rawSame = col((p) => p.rawSame.ms);
  const noop = col((p) => p.syncward.noop.ms);
  const kubectlNoop = col((p) => p.kubectl.noop.ms);
  const noopWrites = col((p) => p.syncward.noop.writes);
  const kubectlNoopWrites = col((p) => p.kubectl.noop.writes);
  const objectsLabel = `${count.toLocaleString("en")} objects`;
  const KUBECTL = "kubectl apply --server-side -f";
  const measurements: Measurement[] = [
    sideBySide(`cold sync, ${objectsLabel}, vs kubectl apply --server-side`, cold, kubectlCold, {
      baseline: KUBECTL,
      meaning: "kubectl time / syncward time, per pair",
      target: ">= 2x faster than kubectl",
      atLeast: 2,
      details: {
        kubectlCpuMs: median(col((p) => p.kubectl.cold.cpuMs ?? Number.NaN)),
        kubectlBeforeFirstWriteMs: median(col((p) => p.kubectl.cold.beforeFirstWriteMs ?? Number.NaN)),
        syncwardRenderMs: median(col((p) => p.syncward.cold.renderMs)),
        syncwardCpuMs: median(col((p) => p.syncward.cold.cpuMs)),
        syncwardRequests: median(col((p) => p.syncward.cold.requests)),
        kubectlRequests: median(col((p) => p.kubectl.cold.requests)),
      },
    }),
    sideBySide(
      `cold sync, ${objectsLabel}, vs raw server-side-apply PATCH (${concurrency} in flight)`,
      cold,
      raw,
      {
        baseline: `raw SSA PATCH, keep-alive, ${concurrency} in flight`,
        meaning: "syncward's rate as a fraction of the raw rate (raw time / syncward time), per pair",
        target: ">= 0.70 of the raw PATCH rate",
        atLeast: 0.7,
        details: {
          calibration: calibration.map((c) => ({ concurrency: c.concurrency, ms: c.ms })),
          rawFailures: runs.reduce((n, p) => n + p.raw.failures, 0),
        },
      },
    ),
    sideBySide(
      `cold sync, ${objectsLabel}, vs a raw client replaying syncward's own requests (${concurrency} in flight)`,
      cold,
      rawSame,
      {
        baseline: `raw replay of syncward's reads, then its dry runs, then its writes (same paths, query and bodies), keep-alive, ${concurrency} in flight`,
        meaning: "syncward's rate as a fraction of a raw client sending the same requests, per pair",
        target: ">= 0.9 of the raw rate for the same requests",
        atLeast: 0.9,
        details: {
          requests: recordedCount,
          rawFailures: runs.reduce((n, p) => n + p.rawSame.failures, 0),
        },
      },
    ),
    sideBySide(`no-op resync, ${objectsLabel}, vs kubectl apply --server-side`, noop, kubectlNoop, {
      baseline: KUBECTL,
      meaning: "kubectl time / syncward time, per pair",
      target: "<= 1/4 of kubectl's time (ratio >= 4)",
      atLeast: 4,
      details: {
        syncwardRequests: median(col((p) => p.syncward.noop.requests)),
        kubectlRequests: median(col((p) => p.kubectl.noop.requests)),
      },
    }),
    {
      name: `no-op resync, ${objectsLabel}, write requests`,
      unit: "writes",
      syncward: median(noopWrites),
      baseline: { name: KUBECTL, value: median(kubectlNoopWrites) },
      target: "0 writes",
      met: Math.max(...noopWrites) === 0,
      samples: { syncward: noopWrites, baseline: kubectlNoopWrites },
    },
  ];
  return {
    measurements,
    data: {
      objects: count,
      calibration,
      pairs: runs.map((p) => ({
        ...p,
        syncward: { cold: strip(p.syncward.cold), noop: strip(p.syncward.noop) },
      })),
    },
  };
}
