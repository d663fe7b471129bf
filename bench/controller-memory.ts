// Benchmark 3: one Reconciler guarding 100 environments of 100 ConfigMaps each (10,000 objects):
// resident memory and heap once everything is synced and idle, and API requests per idle minute.
// The controllers run in a child process of their own (controller-memory-worker.ts, with
// --expose-gc), so the memory measured is theirs and not this runner's.
//
// Scenarios, in order, on the same environments:
//   poll-3m:  each environment's default poll interval (3 minutes), leases off;
//   poll-30s: a 30 s poll, so that idle traffic is not trivially zero;
//   leases:   the default poll with a Lease per environment (what `syncward controller` runs);
//   shipped-client: like poll-3m, but with KubeClient's default socket pool (32 sockets);
//   shipped-client-no-watch: the same without watches (the control for shipped-client).
// The first three give the client a pool of 256 sockets: every environment holds a watch stream
// open per kind, and with the default pool 100 streams leave no socket for anything else (the
// shipped-client scenario shows what happens then).
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Scenario, ScenarioResult, WorkerInput, WorkerOutput } from "./controller-memory-worker.ts";
import { type BenchContext, type BenchResult, mib, ms, progress, type Row } from "./support.ts";

const ENVS = Number(process.env.SYNCWARD_BENCH_ENVS ?? 100);
const OBJECTS = Number(process.env.SYNCWARD_BENCH_ENV_OBJECTS ?? 100);
const IDLE_MS = Number(process.env.SYNCWARD_BENCH_IDLE_MS ?? 60_000);
const WIDE_POOL = 256;

const scenarios: Scenario[] = [
  { name: "poll-3m", leases: false, maxSockets: WIDE_POOL, readyTimeoutMs: 900_000 },
  { name: "poll-30s", leases: false, pollIntervalMs: 30_000, maxSockets: WIDE_POOL, readyTimeoutMs: 300_000 },
  { name: "leases", leases: true, maxSockets: WIDE_POOL, readyTimeoutMs: 300_000 },
  { name: "shipped-client", leases: false, readyTimeoutMs: 60_000, idleMs: 5_000 },
  { name: "shipped-client-no-watch", leases: false, watch: false, readyTimeoutMs: 60_000, idleMs: 5_000 },
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
  const shipped = by("shipped-client");
  if (shipped) {
    rows.push({
      benchmark: name,
      metric: "the same with KubeClient's default 32-socket pool",
      value: shipped.ready
        ? `ready in ${ms(shipped.readyMs)}`
        : `STALLED: not idle after ${ms(shipped.readyMs)}; ${shipped.queuedAtEnd} requests queued for a socket`,
    });
  }
  const control = by("shipped-client-no-watch");
  if (control) {
    rows.push({
      benchmark: name,
      metric: "  the same without watches (control)",
      value: control.ready ? `ready in ${ms(control.readyMs)}` : `not idle after ${ms(control.readyMs)}`,
    });
  }
  return { rows, data: { envs: ENVS, objectsPerEnv: OBJECTS, idleMs: IDLE_MS, ...out } };
}
