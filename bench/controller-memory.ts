// Benchmark 3: one Reconciler guarding 100 environments of 100 ConfigMaps each (10,000 objects):
// resident memory and heap once everything is synced and idle, and API requests per idle minute.
// The controllers run in a child process of their own (controller-memory-worker.ts, with
// --expose-gc), so the memory measured is theirs and not this runner's.
//
// Scenarios, in order, on the same environments, each with KubeClient's defaults:
//   poll-3m:  each environment's default poll interval (3 minutes), leases off;
//   poll-30s: a 30 s poll, so that idle traffic is not trivially zero;
//   leases:   the default poll with a Lease per environment (what `syncward controller` runs).
// After each idle window a ConfigMap in the first and in the last environment is changed out of
// band and the time until it is healed is taken: 100 environments hold 100 watch streams, and
// before 3a519c6 (watches in a pool of their own) 33 streams were enough to take every socket of
// the client's 32-socket pool and stall all requests.
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Scenario, ScenarioResult, WorkerInput, WorkerOutput } from "./controller-memory-worker.ts";
import { type BenchContext, type BenchResult, mib, ms, progress, type Row } from "./support.ts";

const ENVS = Number(process.env.SYNCWARD_BENCH_ENVS ?? 100);
const OBJECTS = Number(process.env.SYNCWARD_BENCH_ENV_OBJECTS ?? 100);
const IDLE_MS = Number(process.env.SYNCWARD_BENCH_IDLE_MS ?? 60_000);

const scenarios: Scenario[] = [
  { name: "poll-3m", leases: false, readyTimeoutMs: 900_000 },
  { name: "poll-30s", leases: false, pollIntervalMs: 30_000, readyTimeoutMs: 300_000 },
  { name: "leases", leases: true, readyTimeoutMs: 300_000 },
];

function runWorker(input: WorkerInput): Promise<WorkerOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        join(import.meta.dirname, "controller-memory-worker.ts"),
        JSON.stringify(input),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
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

const perMinute = (r: ScenarioResult) => r.idle.requestsPerMinute.toFixed(0);
const verbs = (r: ScenarioResult) =>
  Object.entries(r.idle.byVerb)
    .map(([v, n]) => `${v} ${n}`)
    .join(", ") || "none";

export async function controllerMemory(ctx: BenchContext): Promise<BenchResult> {
  progress(`controller memory: ${ENVS} environments x ${OBJECTS} ConfigMaps, idle window ${IDLE_MS / 1000}s`);
  const out = await runWorker({
    kubeconfig: ctx.kubeconfig,
    envs: ENVS,
    objects: OBJECTS,
    idleMs: IDLE_MS,
    scenarios,
  });
  const by = (name: string) => out.scenarios.find((s) => s.scenario.name === name);
  const name = `controller memory (${ENVS} envs x ${OBJECTS} ConfigMaps)`;
  const rows: Row[] = [];
  const first = by("poll-3m");
  if (first) {
    rows.push(
      {
        benchmark: name,
        metric: `initial sync of ${ENVS * OBJECTS} objects${first.ready ? "" : " (NOT complete)"}`,
        value: ms(first.readyMs),
      },
      { benchmark: name, metric: "RSS, synced and idle, after GC", value: mib(first.memory.rss) },
      { benchmark: name, metric: "heap used, synced and idle, after GC", value: mib(first.memory.heapUsed) },
      {
        benchmark: name,
        metric: "  of which the controllers (minus the bare worker)",
        value: mib(first.memory.heapUsed - out.baseline.heapUsed),
      },
      {
        benchmark: name,
        metric: "RSS of the bare worker (node, tsx, imports)",
        value: mib(out.baseline.rss),
      },
    );
  }
  const labels: Record<string, string> = {
    "poll-3m": "idle API requests/min, default 3 min poll",
    "poll-30s": "idle API requests/min, 30 s poll",
    leases: "idle API requests/min, 3 min poll + a Lease per env",
  };
  for (const s of out.scenarios) {
    const label = labels[s.scenario.name];
    if (!label) continue;
    rows.push({
      benchmark: name,
      metric: label,
      value: `${perMinute(s)} (${verbs(s)}; ${s.idle.watchReconnects} watch reconnects)`,
    });
  }
  const probes = out.scenarios.flatMap((r) => (r.healProbe ? [r.healProbe.first, r.healProbe.last] : []));
  const healed = probes.filter((p): p is number => p !== null);
  rows.push({
    benchmark: name,
    metric: "out-of-band change healed (first and last env, each scenario)",
    value:
      healed.length === probes.length
        ? `all ${probes.length}, slowest ${ms(Math.max(...healed))}`
        : `${healed.length}/${probes.length} within 30 s`,
  });
  return { rows, data: { envs: ENVS, objectsPerEnv: OBJECTS, idleMs: IDLE_MS, ...out } };
}
