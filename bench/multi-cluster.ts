// Two clusters against one, side by side in one run: one Reconciler guards ENVS environments of
// OBJECTS ConfigMaps each, all on the benchmark's cluster, and then the same environments split in
// half between it and a second control plane of this benchmark's own (etcd and kube-apiserver in a
// scratch directory; state stays on the first). Measured in the memory benchmark's worker: RSS after
// the first sync, API requests per idle minute to each cluster, and drift-to-revert on each
// cluster (out-of-band PATCHes spread over the environments, timed until the ConfigMap is back).
//
// Full size: 100 environments x 20 ConfigMaps, 60 s idle, 20 heals; `--quick`: 20 x 10, 15 s, 10.
// Knobs: SYNCWARD_BENCH_MC_ENVS, SYNCWARD_BENCH_MC_OBJECTS, SYNCWARD_BENCH_MC_IDLE_MS,
// SYNCWARD_BENCH_MC_HEALS.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { down, up } from "../tools/cluster/plane.ts";
import { runWorker } from "./controller-memory.ts";
import type { ScenarioResult } from "./controller-memory-worker.ts";
import { type BenchContext, type BenchResult, type Measurement, median, progress } from "./support.ts";

const MB = 1_000_000;

function healsOn(s: ScenarioResult, cluster: "first" | "second"): number[] {
  return (s.heals ?? []).flatMap((h, i) =>
    h !== null && (s.healClusters?.[i] ?? "first") === cluster ? [h] : [],
  );
}

export async function multiCluster(ctx: BenchContext): Promise<BenchResult> {
  const envs = Number(process.env.SYNCWARD_BENCH_MC_ENVS ?? (ctx.quick ? 20 : 100));
  const objects = Number(process.env.SYNCWARD_BENCH_MC_OBJECTS ?? (ctx.quick ? 10 : 20));
  const idleMs = Number(process.env.SYNCWARD_BENCH_MC_IDLE_MS ?? (ctx.quick ? 15_000 : 60_000));
  const heals = Number(process.env.SYNCWARD_BENCH_MC_HEALS ?? (ctx.quick ? 10 : 20));
  const scenario = {
    name: "leases",
    leases: true,
    readyTimeoutMs: 900_000,
    probe: false,
    healTrials: heals,
  };
  const dir = join(mkdtempSync(join(tmpdir(), "syncward-bench-second-plane-")), "plane");
  progress(`multi-cluster: starting a second control plane in ${dir}`);
  const { state } = await up({ dir, apiOnly: true });
  try {
    progress(`multi-cluster: ${envs} environments x ${objects} ConfigMaps on one cluster`);
    const one = (
      await runWorker({ kubeconfig: ctx.kubeconfig, envs, objects, idleMs, scenarios: [scenario] })
    ).scenarios[0] as ScenarioResult;
    progress(`multi-cluster: the same, half on the second cluster`);
    const two = (
      await runWorker({
        kubeconfig: ctx.kubeconfig,
        secondKubeconfig: state.kubeconfig,
        envs,
        objects,
        idleMs,
        scenarios: [scenario],
      })
    ).scenarios[0] as ScenarioResult;
    const half = envs / 2;
    const [healFirst, healSecond] = [healsOn(two, "first"), healsOn(two, "second")];
    const perCluster = two.idleByCluster ?? { first: Number.NaN, second: Number.NaN };
    const measurements: Measurement[] = [
      {
        name: `drift-to-revert on the second cluster vs the first (2 x ${half} environments), median`,
        unit: "ms",
        syncward: median(healSecond),
        baseline: { name: "on the first cluster", value: median(healFirst) },
        ratio: median(healSecond) / median(healFirst),
        ratioMeaning: "second / first (1 = the same)",
        target: "the same p50, < 60 ms",
        met: median(healSecond) < 60 && median(healFirst) < 60,
        samples: { syncward: healSecond, baseline: healFirst },
        details: { oneClusterMedianMs: median(healsOn(one, "first")) },
      },
      {
        name: `API requests per idle minute per cluster: 2 x ${half} environments vs 1 x ${envs}`,
        unit: "req/min",
        syncward: Math.round(Math.max(perCluster.first, perCluster.second)),
        baseline: { name: `1 cluster x ${envs}`, value: Math.round(one.idle.requestsPerMinute) },
        ratio: (perCluster.first + perCluster.second) / one.idle.requestsPerMinute,
        ratioMeaning: "both clusters together / one cluster (1 = no added idle cost)",
        target: "no polls: each cluster's idle cost is its watches' and leases'",
        samples: { syncward: [perCluster.first, perCluster.second], baseline: [one.idle.requestsPerMinute] },
        details: { first: perCluster.first, second: perCluster.second, oneByVerb: one.idle.byVerb },
      },
      {
        name: `controller RSS after the first sync: 2 clusters x ${half} environments vs 1 x ${envs}`,
        unit: "MB",
        syncward: Math.round(two.memory.rss / MB),
        baseline: { name: "1 cluster", value: Math.round(one.memory.rss / MB) },
        ratio: two.memory.rss / one.memory.rss,
        ratioMeaning: "2 clusters / 1",
        target: "a second cluster costs a client and a watch hub, not a copy of the controller",
        samples: { syncward: [two.memory.rss / MB], baseline: [one.memory.rss / MB] },
        details: {
          ready: { one: one.ready, two: two.ready },
          readyMs: { one: one.readyMs, two: two.readyMs },
        },
      },
    ];
    return { measurements, data: { envs, objects, idleMs, one, two } };
  } finally {
    await down(dir);
  }
}
