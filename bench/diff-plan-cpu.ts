// Benchmark 5: the CPU a sync spends deciding, without a cluster. 10,000 objects rendered from YAML
// (the cold-sync benchmark's apps: ServiceAccount, ConfigMap, Secret, Service and Deployment each)
// against a synthetic live set as the API server would return it (live-objects.ts): 1 in 20
// objects drifted by hand, 1 in 100 more managed live objects that Git no longer declares. Timed
// with process.cpuUsage (user + system) around what assess does between the reads and the writes:
// tracking (the applied hash) and planSync with the environment's comparer.
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { comparerFor } from "../src/engine/assess.ts";
import { planSync } from "../src/engine/plan.ts";
import { withTracking } from "../src/engine/tracking.ts";
import { type KubeObject, keyOf, keyString } from "../src/kube/object.ts";
import { render } from "../src/source/render.ts";
import { envConfig } from "../test/support/env.ts";
import { asLive, drift } from "./live-objects.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import { type BenchContext, type BenchResult, median, progress } from "./support.ts";

const NAMESPACE = "bench-diff";
const INSTANCE = "bench.diff";

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

function liveSet(desired: KubeObject[]): { live: Map<string, KubeObject>; drifted: number; orphans: number } {
  const live = new Map<string, KubeObject>();
  let drifted = 0;
  desired.forEach((obj, i) => {
    const l = asLive(withTracking(obj, INSTANCE), i);
    if (i % 20 === 7) {
      drift(l);
      drifted++;
    }
    live.set(keyString(keyOf(l)), l);
  });
  const orphans = Math.floor(desired.length / 100);
  for (let i = 0; i < orphans; i++) {
    const gone: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `removed-from-git-${i}`, namespace: NAMESPACE },
      data: { KEY: "value" },
    };
    const l = asLive(withTracking(gone, INSTANCE), desired.length + i);
    live.set(keyString(keyOf(l)), l);
  }
  return { live, drifted, orphans };
}

export async function diffPlanCpu(ctx: BenchContext): Promise<BenchResult> {
  const apps = Number(process.env.SYNCWARD_BENCH_DIFF_APPS ?? (ctx.quick ? 200 : 2000));
  const trials = Number(process.env.SYNCWARD_BENCH_DIFF_TRIALS ?? (ctx.quick ? 10 : 5));
  const dir = writeManifests(apps);
  const count = apps * KINDS_PER_APP;
  let desired: KubeObject[];
  const renderStart = process.cpuUsage();
  try {
    // More objects than one environment may render by default (SYNCWARD_MAX_OBJECTS): the limit is
    // the operator's, and this measures the decision at the size the issue asks for.
    desired = (await render(dir, ".", { limits: { maxObjects: count } })).objects.map((o) => ({
      ...o,
      metadata: { ...o.metadata, namespace: NAMESPACE },
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const renderCpuMs = cpuMs(renderStart);
  const { live, drifted, orphans } = liveSet(desired);
  const env = envConfig(NAMESPACE, { syncPolicy: { automated: { prune: true } } });
  progress(`diff and plan: ${count} objects, ${drifted} drifted, ${orphans} to prune, ${trials} trials`);
  const cpu: number[] = [];
  const wall: number[] = [];
  let outcome = { update: 0, unchanged: 0, prune: 0 };
  for (let t = 0; t < trials; t++) {
    const since = process.cpuUsage();
    const start = performance.now();
    const tracked = desired.map((o) => withTracking(o, INSTANCE));
    const plan = planSync({
      instance: INSTANCE,
      desired: tracked,
      live,
      compare: comparerFor(env),
      prune: true,
      allowEmpty: false,
      failOnSharedResource: false,
    });
    wall.push(performance.now() - start);
    cpu.push(cpuMs(since));
    outcome = {
      update: plan.steps.reduce((n, s) => n + s.tasks.length, 0),
      unchanged: plan.unchanged.length,
      prune: plan.prunes.length,
    };
  }
  if (outcome.update !== drifted || outcome.prune !== orphans)
    throw new Error(`the plan does not match the drift: ${JSON.stringify({ outcome, drifted, orphans })}`);
  return {
    measurements: [
      {
        name: `diff and plan, ${count.toLocaleString("en")} objects, no cluster (CPU time)`,
        unit: "ms",
        syncward: median(cpu),
        target: "< 1 s",
        met: median(cpu) < 1000,
        samples: { syncward: cpu },
        details: { wallMs: wall, renderCpuMs, plan: outcome },
      },
    ],
  };
}
