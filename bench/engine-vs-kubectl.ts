// Benchmark 1: the sync engine against `kubectl apply --server-side` on 1,000 objects, cold (into an
// empty namespace) and again with nothing changed, in one run against the same API server. kubectl
// runs twice per trial: as shipped (client-side validation, --validate=strict) and with
// --validate=false, which leaves it only the requests. Each trial gets a fresh namespace per tool;
// the order of the tools rotates between trials; between measurements the Deployments are left to
// roll out so no tool pays for another's pod churn. All read the same YAML files: the engine's time
// includes rendering them, and both sides start cold (the engine with a new client, so discovery
// runs again, as kubectl's does).
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import type { EnvironmentConfig } from "../src/config/types.ts";
import type { KindRef } from "../src/engine/live.ts";
import { syncEnvironment } from "../src/engine/sync.ts";
import { render } from "../src/source/render.ts";
import { type KubectlApply, kubectlApply } from "./kubectl-apply.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  median,
  ms,
  Namespaces,
  progress,
  type Row,
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

type Side = "syncward" | "kubectl" | "kubectlNoValidate";
const SIDES: Side[] = ["syncward", "kubectl", "kubectlNoValidate"];

interface Trial {
  order: Side[];
  loadAverage: { start: number[]; end: number[] };
  engine: { cold: EngineRun; noop: EngineRun };
  kubectl: { cold: KubectlApply; noop: KubectlApply };
  kubectlNoValidate: { cold: KubectlApply; noop: KubectlApply };
}

async function trial(ctx: BenchContext, dir: string, index: number): Promise<Trial> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-eng");
  try {
    const ns = {
      syncward: await namespaces.create("syncward"),
      kubectl: await namespaces.create("kubectl"),
      kubectlNoValidate: await namespaces.create("kubectl-nv"),
    };
    // Rotate who goes first, so no tool always meets the API server right after another's writes.
    const order = SIDES.map((_, i) => SIDES[(i + index) % SIDES.length] as Side);
    const settle = (namespace: string) => waitDeploymentsReady(admin, namespace);
    const start = loadavg();
    const partial: Partial<Omit<Trial, "order" | "loadAverage">> = {};
    for (const side of order) {
      if (side === "syncward") {
        const cold = await runEngine(ctx, dir, ns.syncward);
        await settle(ns.syncward);
        partial.engine = { cold, noop: await runEngine(ctx, dir, ns.syncward, cold.inventory) };
      } else {
        const validate = side === "kubectl";
        const cold = await kubectlApply(ctx, dir, ns[side], validate);
        await settle(ns[side]);
        partial[side] = { cold, noop: await kubectlApply(ctx, dir, ns[side], validate) };
      }
    }
    const t = { order, loadAverage: { start, end: loadavg() }, ...partial } as Trial;
    const line = (
      label: string,
      r: { cold: { ms: number; writes: number }; noop: { ms: number; writes: number } },
    ) =>
      `${label} cold ${ms(r.cold.ms)} (${r.cold.writes} writes), no-op ${ms(r.noop.ms)} (${r.noop.writes} writes)`;
    progress(
      `trial ${index + 1}: ${line("syncward", t.engine)}; ${line("kubectl", t.kubectl)}; ${line("kubectl --validate=false", t.kubectlNoValidate)}`,
    );
    return t;
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
  const m = (pick: (t: Trial) => number | undefined) => median(trials.map((t) => pick(t) ?? Number.NaN));
  const kubectlSummary = (side: "kubectl" | "kubectlNoValidate") => ({
    coldMs: m((t) => t[side].cold.ms),
    coldCpuMs: m((t) => t[side].cold.cpuMs),
    coldBeforeFirstWriteMs: m((t) => t[side].cold.beforeFirstWriteMs),
    coldRequestMs: m((t) => t[side].cold.requestMs),
    coldWrites: m((t) => t[side].cold.writes),
    coldRequests: m((t) => t[side].cold.requests),
    noopMs: m((t) => t[side].noop.ms),
    noopCpuMs: m((t) => t[side].noop.cpuMs),
    noopWrites: m((t) => t[side].noop.writes),
    noopRequests: m((t) => t[side].noop.requests),
  });
  const summary = {
    objects,
    trials: TRIALS,
    syncward: {
      coldMs: m((t) => t.engine.cold.ms),
      coldRenderMs: m((t) => t.engine.cold.renderMs),
      coldCpuMs: m((t) => t.engine.cold.cpuMs),
      coldWrites: m((t) => t.engine.cold.writes),
      coldRequests: m((t) => t.engine.cold.requests),
      noopMs: m((t) => t.engine.noop.ms),
      noopCpuMs: m((t) => t.engine.noop.cpuMs),
      noopWrites: m((t) => t.engine.noop.writes),
      noopRequests: m((t) => t.engine.noop.requests),
    },
    kubectl: kubectlSummary("kubectl"),
    kubectlNoValidate: kubectlSummary("kubectlNoValidate"),
  };
  const name = `engine vs kubectl (${objects} objects, median of ${TRIALS})`;
  const s = summary.syncward;
  const rows: Row[] = [];
  for (const [side, label] of [
    ["kubectl", ""],
    ["kubectlNoValidate", " [kubectl --validate=false]"],
  ] as const) {
    const k = summary[side];
    rows.push(
      {
        benchmark: name,
        metric: `cold sync, wall time${label}`,
        value: ms(s.coldMs),
        kubectl: ms(k.coldMs),
        ratio: ratio(k.coldMs, s.coldMs),
      },
      {
        benchmark: name,
        metric: `cold sync, client CPU time${label}`,
        value: ms(s.coldCpuMs),
        kubectl: ms(k.coldCpuMs),
      },
      {
        benchmark: name,
        metric: `cold sync, writes / requests${label}`,
        value: `${s.coldWrites} / ${s.coldRequests}`,
        kubectl: `${k.coldWrites} / ${k.coldRequests}`,
      },
      {
        benchmark: name,
        metric: `nothing changed, wall time${label}`,
        value: ms(s.noopMs),
        kubectl: ms(k.noopMs),
        ratio: ratio(k.noopMs, s.noopMs),
      },
      {
        benchmark: name,
        metric: `nothing changed, writes / requests${label}`,
        value: `${s.noopWrites} / ${s.noopRequests}`,
        kubectl: `${k.noopWrites} / ${k.noopRequests}`,
      },
    );
  }
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
