// Benchmark 3: one Reconciler guarding 100 environments of 100 ConfigMaps each (10,000 objects):
// resident memory and heap once everything is synced and idle, and API requests per idle minute.
// The controllers run in a child process of their own (controller-memory-worker.ts, with
// --expose-gc), so the memory measured is theirs and not this runner's. The worker is compiled
// with tsc first (tsconfig.bench.json) and runs as plain JavaScript, as the product does: no tsx
// or esbuild in the measured process.
//
// Scenarios, on the same environments, each with KubeClient's defaults:
//   leases:   the default poll (3 minutes) and the app's Lease: what `syncward controller` runs,
//             and the only scenario of a default run;
//   poll-3m:  the default poll, leases off;
//   poll-30s: a 30 s poll, so that idle traffic is not trivially zero.
// SYNCWARD_BENCH_MEMORY_SCENARIOS=all runs all three (poll-3m first, as before).
// After each idle window a ConfigMap in the first and in the last environment is changed out of
// band and the time until it is healed is taken: 100 environments hold 100 watch streams, and
// before 3a519c6 (watches in a pool of their own) 33 streams were enough to take every socket of
// the client's 32-socket pool and stall all requests.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Scenario, WorkerInput, WorkerOutput } from "./controller-memory-worker.ts";
import { type BenchContext, type BenchResult, type Measurement, progress } from "./support.ts";

const allScenarios: Scenario[] = [
  { name: "poll-3m", leases: false, readyTimeoutMs: 900_000 },
  { name: "poll-30s", leases: false, pollIntervalMs: 30_000, readyTimeoutMs: 300_000 },
  { name: "leases", leases: true, readyTimeoutMs: 900_000 },
];

const ROOT = join(import.meta.dirname, "..");

/** The worker as JavaScript (the same tsc settings as `npm run build`, plus bench/ and test/support/). */
function compiledWorker(): string {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.bench.json"], { cwd: ROOT, stdio: "inherit" });
  return join(ROOT, ".cache", "bench-js", "bench", "controller-memory-worker.js");
}

/**
 * The image's Node flags and malloc setting (the Dockerfile's ENV), so the worker measures what
 * the image runs; --expose-gc in any case, for the measurement's own GCs.
 */
export function imageRuntime(dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8")): {
  flags: string[];
  env: Record<string, string>;
} {
  const options = /NODE_OPTIONS="([^"]*)"/.exec(dockerfile)?.[1] ?? "";
  const flags = options.split(/\s+/).filter(Boolean);
  if (!flags.includes("--expose-gc")) flags.unshift("--expose-gc");
  const arenas = /MALLOC_ARENA_MAX=(\d+)/.exec(dockerfile)?.[1];
  return { flags, env: arenas ? { MALLOC_ARENA_MAX: arenas } : {} };
}

/** The Node version the image runs (tools/cluster/versions.env). */
export function imageNodeVersion(
  versions = readFileSync(join(ROOT, "tools", "cluster", "versions.env"), "utf8"),
): string {
  const version = /^IMAGE_NODE_VERSION=(\S+)$/m.exec(versions)?.[1];
  if (!version) throw new Error("tools/cluster/versions.env names no IMAGE_NODE_VERSION");
  return version;
}

let imageNodePath: string | undefined;

/**
 * The image's Node binary, whatever Node runs the benchmark: memory is the runtime's as much as
 * syncward's (Node 20 and 24 differ by tens of MB here), so the controllers measured run on the
 * image's Node. This process's own when it is that version; else the npm registry's `node`
 * package of that version, as CI runs the suites (fetched once, then npx's cache).
 */
export function imageNode(): string {
  const version = imageNodeVersion();
  if (process.version === `v${version}`) return process.execPath;
  imageNodePath ??= execFileSync("npx", ["-y", "-p", `node@${version}`, "node", "-p", "process.execPath"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return imageNodePath;
}

export function runWorker(input: WorkerInput): Promise<WorkerOutput> {
  const worker = compiledWorker();
  const runtime = imageRuntime();
  const node = imageNode();
  progress(
    `memory worker: node v${imageNodeVersion()} ${runtime.flags.join(" ")} ${JSON.stringify(runtime.env)}`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...runtime.flags, worker, JSON.stringify(input)], {
      cwd: ROOT,
      env: { ...process.env, ...runtime.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      out += c;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code === 0 && last.startsWith("{")) resolve(JSON.parse(last) as WorkerOutput);
      else reject(new Error(`the controller-memory worker exited with code ${code}`));
    });
  });
}

const MB = 1_000_000;

export async function controllerMemory(ctx: BenchContext): Promise<BenchResult> {
  const ENVS = Number(process.env.SYNCWARD_BENCH_ENVS ?? (ctx.quick ? 10 : 100));
  const OBJECTS = Number(process.env.SYNCWARD_BENCH_ENV_OBJECTS ?? (ctx.quick ? 10 : 100));
  const IDLE_MS = Number(process.env.SYNCWARD_BENCH_IDLE_MS ?? (ctx.quick ? 10_000 : 60_000));
  const scenarios =
    process.env.SYNCWARD_BENCH_MEMORY_SCENARIOS === "all"
      ? allScenarios
      : allScenarios.filter((s) => s.name === "leases");
  progress(`controller memory: ${ENVS} environments x ${OBJECTS} ConfigMaps, idle window ${IDLE_MS / 1000}s`);
  const out = await runWorker({
    kubeconfig: ctx.kubeconfig,
    envs: ENVS,
    objects: OBJECTS,
    idleMs: IDLE_MS,
    scenarios,
  });
  const measurements: Measurement[] = out.scenarios.map((s) => ({
    name: `controller RSS, ${ENVS} envs x ${OBJECTS} objects, synced and idle (${s.scenario.name})`,
    unit: "MB",
    syncward: Math.round(s.memory.rss / MB),
    target: "< 150 MB",
    met: s.ready && s.memory.rss < 150 * MB,
    samples: { syncward: [Math.round(s.memory.rss / MB), Math.round(s.memoryAfterIdle.rss / MB)] },
    details: {
      node: `v${imageNodeVersion()}`,
      ready: s.ready,
      initialSyncMs: s.readyMs,
      initialSyncCpuMs: Math.round(s.syncCpuMs),
      peakDuringSyncMB: {
        rss: Math.round(s.duringSync.peak.rss / MB),
        heapTotal: Math.round(s.duringSync.peak.heapTotal / MB),
        heapUsed: Math.round(s.duringSync.peak.heapUsed / MB),
        external: Math.round(s.duringSync.peak.external / MB),
      },
      heapSpacesMB: s.heapSpacesMB,
      residentMB: s.residentMB,
      memoryRelease: s.release && {
        ms: Math.round(s.release.ms),
        rssBeforeMB: Math.round(s.release.rssBefore / MB),
        rssAfterMB: Math.round(s.release.rssAfter / MB),
      },
      heapUsedMB: Math.round(s.memory.heapUsed / MB),
      controllersHeapMB: Math.round((s.memory.heapUsed - out.baseline.heapUsed) / MB),
      bareWorkerRssMB: Math.round(out.baseline.rss / MB),
      rssAfterIdleMB: Math.round(s.memoryAfterIdle.rss / MB),
      idleRequestsPerMinute: Math.round(s.idle.requestsPerMinute),
      idleByVerb: s.idle.byVerb,
      healProbeMs: s.healProbe,
    },
  }));
  return { measurements, data: { envs: ENVS, objectsPerEnv: OBJECTS, idleMs: IDLE_MS, ...out } };
}
