// Benchmark 4: the local control plane. Warm start (binaries cached, fresh data and certificates)
// and idle memory, measured on a plane of its own in a scratch SYNCWARD_CLUSTER_DIR, so the shared
// plane is never stopped or disturbed (plane-worker.ts does the starting and stopping).
//
// The cold build is opt-in (`npm run bench -- build`): it compiles every component from source into
// a scratch SYNCWARD_CLUSTER_CACHE with a scratch GOCACHE (downloaded modules are reused from the
// Go module cache), takes about 10 minutes of both cores, and slows anything else on the machine.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { COMPONENTS, readState, rssBytes } from "../tools/cluster/plane.ts";
import type { PlaneWorkerOutput } from "./plane-worker.ts";
import { type BenchResult, type Measurement, median, mib, progress } from "./support.ts";

const TRIALS = Number(process.env.SYNCWARD_BENCH_PLANE_TRIALS ?? 3);
const SETTLE_MS = Number(process.env.SYNCWARD_BENCH_PLANE_SETTLE_MS ?? 30_000);
const repoRoot = join(import.meta.dirname, "..");

function spawnCollect(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      stdout += c;
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, ms: performance.now() - start }));
  });
}

export async function planeBench(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "syncward-bench-plane-"));
  progress(`plane: ${TRIALS} warm starts in ${dir}, memory sampled after ${SETTLE_MS / 1000}s idle`);
  let out: PlaneWorkerOutput;
  try {
    const run = await spawnCollect(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "plane-worker.ts"), String(TRIALS), String(SETTLE_MS)],
      { ...process.env, SYNCWARD_CLUSTER_DIR: dir },
    );
    const last = run.stdout.trim().split("\n").at(-1) ?? "";
    if (run.code !== 0 || !last.startsWith("{"))
      throw new Error(`the plane worker exited with code ${run.code}`);
    out = JSON.parse(last) as PlaneWorkerOutput;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const upMs = median(out.trials.map((t) => t.upMs));
  const rssTotal = median(out.trials.map((t) => t.rssTotal));
  const perComponent = Object.fromEntries(
    COMPONENTS.map((c) => [c, median(out.trials.map((t) => t.rss[c] ?? 0))]),
  ) as Record<string, number>;
  // The shared plane, for comparison: it has been serving tests and benchmarks, so it is warmer.
  const shared = readState();
  const sharedRss = shared ? rssBytes(shared) : undefined;
  const sharedTotal = sharedRss ? Object.values(sharedRss).reduce((a, b) => a + b, 0) : undefined;
  const measurements: Measurement[] = [
    {
      name: `control plane warm start (up, binaries cached), median of ${TRIALS}`,
      unit: "ms",
      syncward: upMs,
      samples: { syncward: out.trials.map((t) => t.upMs) },
      details: { downMs: out.trials.map((t) => t.downMs), binariesCheckMs: out.binariesCheckMs },
    },
    {
      name: `control plane idle RSS, all processes, ${SETTLE_MS / 1000}s after start`,
      unit: "MiB",
      syncward: mib(rssTotal),
      samples: { syncward: out.trials.map((t) => mib(t.rssTotal)) },
      details: {
        byComponentMiB: Object.fromEntries(COMPONENTS.map((c) => [c, mib(perComponent[c] ?? 0)])),
        sharedPlaneMiB: sharedTotal === undefined ? undefined : mib(sharedTotal),
      },
    },
  ];
  return {
    measurements,
    data: {
      ...out,
      summary: { upMedianMs: upMs, rssTotalMedian: rssTotal, rssMedianByComponent: perComponent },
      sharedPlaneRss: sharedRss,
    },
  };
}

/** Opt-in: a cold build of every component from source (scratch binary cache and GOCACHE). */
export async function coldBuildBench(): Promise<BenchResult> {
  const cache = mkdtempSync(join(tmpdir(), "syncward-bench-cluster-cache-"));
  const gocache = mkdtempSync(join(tmpdir(), "syncward-bench-gocache-"));
  progress(`cold build: SYNCWARD_CLUSTER_CACHE=${cache} GOCACHE=${gocache} (about 10 minutes on 2 cores)`);
  try {
    const run = await spawnCollect("bash", [join(repoRoot, "tools/cluster/build.sh")], {
      ...process.env,
      SYNCWARD_CLUSTER_CACHE: cache,
      GOCACHE: gocache,
    });
    if (run.code !== 0) throw new Error(`build.sh exited with code ${run.code}`);
    return {
      measurements: [
        {
          name: "control plane cold build (build.sh, nothing cached but Go modules)",
          unit: "ms",
          syncward: run.ms,
          samples: { syncward: [run.ms] },
        },
      ],
      data: { ms: run.ms, goModulesCached: true },
    };
  } finally {
    rmSync(cache, { recursive: true, force: true });
    rmSync(gocache, { recursive: true, force: true });
  }
}
