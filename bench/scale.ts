// Issue 19, steady state at scale on one replica: one Reconciler (the controller's, leases on) guards
// ENVS environments of OBJECTS ConfigMaps each, synced and then idle, and the same at a small size in
// the same run, so that the idle cost can be compared across a 20-fold object count: RSS, CPU per
// idle minute, API requests per idle minute (counted at the client: watches, leases, any poll),
// drift-to-revert spread over the environments, and the time from a refresh of one environment (what
// a webhook does: a new commit, then a nudge) to that environment's syncStarted while the rest idle.
// The controllers run in the memory benchmark's worker (controller-memory-worker.ts), compiled to
// JavaScript and measured in a process of their own. Diff and plan CPU of 10,000 objects is the diff
// benchmark at that size (no cluster).
//
// Full size: 1,000 x 20 (20,000 objects) against 50 x 20 (1,000), idle 200 s (one poll of every
// environment). `--quick`: 50 x 20 against 10 x 20, idle 20 s (no poll in the window).
// Knobs: SYNCWARD_BENCH_SCALE_ENVS, SYNCWARD_BENCH_SCALE_SMALL_ENVS, SYNCWARD_BENCH_SCALE_OBJECTS,
// SYNCWARD_BENCH_IDLE_MS, SYNCWARD_BENCH_HEAL_TRIALS, SYNCWARD_BENCH_WEBHOOK_TRIALS,
// SYNCWARD_BENCH_SCALE_POLL_MS (every environment's poll interval), SYNCWARD_BENCH_SCALE_SETTLE_MS
// (the wait between synced and the idle window).
import { runWorker } from "./controller-memory.ts";
import type { ScenarioResult } from "./controller-memory-worker.ts";
import { diffPlanCpu } from "./diff-plan-cpu.ts";
import {
  type BenchContext,
  type BenchResult,
  type Measurement,
  median,
  percentile,
  progress,
} from "./support.ts";

const MB = 1_000_000;

async function size(
  ctx: BenchContext,
  envs: number,
  objects: number,
  o: { heals: number; refreshes: number },
) {
  // A full run's window spans the default poll's mean interval (3 minutes plus up to 20% jitter):
  // a shorter one counts the polls of the sizes differently (the small size's first polls fall
  // after a one-minute window, the large size's, after a long initial sync, inside it).
  const idleMs = Number(process.env.SYNCWARD_BENCH_IDLE_MS ?? (ctx.quick ? 20_000 : 200_000));
  // Steady state: the window opens once every environment has had its first poll after its sync
  // (that one reads the cluster in full; see docs/semantics.md, "Idle polls"). A full run waits one
  // poll interval with its jitter (3.6 minutes) unless told otherwise; --quick does not wait.
  const pollMs = process.env.SYNCWARD_BENCH_SCALE_POLL_MS
    ? Number(process.env.SYNCWARD_BENCH_SCALE_POLL_MS)
    : undefined;
  const settleMs = Number(
    process.env.SYNCWARD_BENCH_SCALE_SETTLE_MS ?? (ctx.quick ? 0 : Math.round((pollMs ?? 180_000) * 1.2)),
  );
  progress(
    `scale: ${envs} environments x ${objects} ConfigMaps, idle window ${idleMs / 1000}s after ${settleMs / 1000}s settling`,
  );
  const out = await runWorker({
    kubeconfig: ctx.kubeconfig,
    envs,
    objects,
    idleMs,
    scenarios: [
      {
        name: "leases",
        leases: true,
        readyTimeoutMs: 1_800_000,
        pollIntervalMs: pollMs,
        settleMs,
        probe: false,
        healTrials: o.heals,
        refreshTrials: o.refreshes,
      },
    ],
  });
  const s = out.scenarios[0] as ScenarioResult;
  if (!s.ready) progress(`scale: ${envs} x ${objects} was NOT all synced within the deadline`);
  return { envs, objects, total: envs * objects, result: s, bareWorkerRss: out.baseline.rss };
}

export async function scale(ctx: BenchContext): Promise<BenchResult> {
  const objects = Number(process.env.SYNCWARD_BENCH_SCALE_OBJECTS ?? 20);
  const envs = Number(process.env.SYNCWARD_BENCH_SCALE_ENVS ?? (ctx.quick ? 50 : 1000));
  const smallEnvs = Number(process.env.SYNCWARD_BENCH_SCALE_SMALL_ENVS ?? (ctx.quick ? 10 : 50));
  const heals = Number(process.env.SYNCWARD_BENCH_HEAL_TRIALS ?? (ctx.quick ? 10 : 30));
  const refreshes = Number(process.env.SYNCWARD_BENCH_WEBHOOK_TRIALS ?? (ctx.quick ? 5 : 20));
  const small = await size(ctx, smallEnvs, objects, { heals, refreshes: 0 });
  const large = await size(ctx, envs, objects, { heals, refreshes });
  const diff = await diffPlanCpu({ ...ctx, quick: false });

  const label = (s: typeof large) =>
    `${s.envs.toLocaleString("en")} envs x ${s.objects} (${s.total.toLocaleString("en")} objects)`;
  const healed = (s: typeof large) => (s.result.heals ?? []).filter((h): h is number => h !== null);
  const failedHeals = (s: typeof large) => (s.result.heals ?? []).filter((h) => h === null).length;
  const perMinute = (s: typeof large) => s.result.idle.requestsPerMinute;
  const idleLine = (s: typeof large) => ({
    requestsPerMinute: Math.round(perMinute(s)),
    cpuMsPerMinute: Math.round(s.result.idle.cpuMsPerMinute),
    byVerb: s.result.idle.byVerb,
    rssMB: Math.round(s.result.memory.rss / MB),
    rssAfterIdleMB: Math.round(s.result.memoryAfterIdle.rss / MB),
    initialSyncMs: Math.round(s.result.readyMs),
    ready: s.result.ready,
  });
  const heal = healed(large);
  const healSmall = healed(small);
  const refresh = (large.result.refreshes ?? []).filter((r) => !Number.isNaN(r));
  const diffCpu = diff.measurements[0];
  const measurements: Measurement[] = [
    {
      name: `controller RSS, ${label(large)}, synced and idle (one replica)`,
      unit: "MB",
      syncward: Math.round(large.result.memory.rss / MB),
      samples: {
        syncward: [
          Math.round(large.result.memory.rss / MB),
          Math.round(large.result.memoryAfterIdle.rss / MB),
        ],
      },
      details: {
        small: idleLine(small),
        large: idleLine(large),
        bareWorkerRssMB: Math.round(large.bareWorkerRss / MB),
      },
    },
    {
      name: `controller CPU per idle minute, ${label(large)}`,
      unit: "ms",
      syncward: large.result.idle.cpuMsPerMinute,
      baseline: { name: label(small), value: small.result.idle.cpuMsPerMinute },
      samples: { syncward: [large.result.idle.cpuMsPerMinute], baseline: [small.result.idle.cpuMsPerMinute] },
    },
    {
      name: `API requests per idle minute, ${label(large)} vs ${label(small)}`,
      unit: "requests/min",
      syncward: perMinute(large),
      baseline: { name: label(small), value: perMinute(small) },
      ratio: perMinute(large) / Math.max(perMinute(small), 1e-9),
      ratioMeaning: "large / small",
      target: "no higher than at the small size",
      // Whole requests per minute: the two idle windows differ by milliseconds.
      met: large.result.ready && Math.round(perMinute(large)) <= Math.round(perMinute(small)),
      samples: { syncward: [perMinute(large)], baseline: [perMinute(small)] },
      details: { large: large.result.idle.byVerb, small: small.result.idle.byVerb },
    },
    {
      name: `drift-to-revert, ${label(small)}, ${healSmall.length} edits: median`,
      unit: "ms",
      syncward: median(healSmall),
      target: "< 60 ms (p99 < 250 ms)",
      met: failedHeals(small) === 0 && median(healSmall) < 60 && percentile(healSmall, 99) < 250,
      samples: { syncward: healSmall },
      details: { p99Ms: percentile(healSmall, 99), failures: failedHeals(small), method: "GET every 10 ms" },
    },
    {
      name: `drift-to-revert, ${label(large)}, ${heal.length} edits: median`,
      unit: "ms",
      syncward: median(heal),
      target: "< 250 ms",
      met: failedHeals(large) === 0 && median(heal) < 250,
      samples: { syncward: heal },
      details: { p99Ms: percentile(heal, 99), failures: failedHeals(large), method: "GET every 10 ms" },
    },
    {
      name: `refresh of one environment -> its sync start, ${label(large)} idle: median`,
      unit: "ms",
      syncward: median(refresh),
      samples: { syncward: refresh },
      details: { p99Ms: percentile(refresh, 99), trials: large.result.refreshes },
    },
    ...(diffCpu ? [{ ...diffCpu, target: "< 300 ms CPU", met: diffCpu.syncward < 300 }] : []),
  ];
  return { measurements, data: { small, large, diff: diffCpu } };
}
