// The process measured by benchmark 3 (spawned by controller-memory.ts with --expose-gc, so that
// its memory is the controllers' and nothing else's). It syncs ENVS environments of OBJECTS
// ConfigMaps each with one Reconciler, then for each scenario measures memory after a GC and the
// API requests made in IDLE_MS of idleness. Progress goes to stderr; the result is the last line
// of stdout, as JSON.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";
import pino from "pino";
import { parse, stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import { KubeClient } from "../src/kube/client.ts";
import { Clusters } from "../src/kube/clusters.ts";
import type { ReconcilerEvent } from "../src/reconciler/events.ts";
import { Reconciler } from "../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../src/reconciler/revision-source.ts";
import { mapLimit } from "../src/util/map-limit.ts";
import { lastMemoryRelease, type MemoryRelease } from "../src/util/release-memory.ts";
import { sleep } from "../src/util/sleep.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { gc, Namespaces, progress } from "./support.ts";

export interface Scenario {
  name: string;
  leases: boolean;
  /** undefined: each environment's pollInterval (default 3 minutes). */
  pollIntervalMs?: number;
  /** KubeClient's socket pool (its default is 32). */
  maxSockets?: number;
  /** Watch managed objects (default true). */
  watch?: boolean;
  /** After the idle window, change a ConfigMap out of band and time the self-heal (default true). */
  probe?: boolean;
  /** How long to wait for every environment to be synced and idle before giving up. */
  readyTimeoutMs: number;
  /** Idle window for this scenario (default: the input's idleMs). */
  idleMs?: number;
  /**
   * Scale benchmark: how long to wait after every environment is synced before the idle window
   * opens (default 0), so that the window holds steady state: the first poll after a sync reads
   * the cluster in full (the sync wrote the state), later ones read nothing while watches are quiet.
   */
  settleMs?: number;
  /** Scale benchmark: out-of-band edits timed to their revert, spread over the environments. */
  healTrials?: number;
  /** Scale benchmark: commits that change one environment, each timed from its nudge to its syncStarted. */
  refreshTrials?: number;
}

export interface WorkerInput {
  kubeconfig: string;
  /**
   * A second cluster (an admin kubeconfig): the second half of the environments deploy there,
   * through syncward's cluster resolution (a kubeconfig context named `second`), state on the first.
   */
  secondKubeconfig?: string;
  envs: number;
  objects: number;
  idleMs: number;
  scenarios: Scenario[];
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface ScenarioResult {
  scenario: Scenario;
  /** False when the environments were not all synced (or leased) and idle within readyTimeoutMs. */
  ready: boolean;
  readyMs: number;
  synced: number;
  active: number;
  requestsUntilReady: number;
  /** After the GC that follows the initial passes, and again after the idle window. */
  memory: MemorySample;
  /** Sampled every 200 ms from start until ready: each figure's own maximum, and the sample of the highest RSS. */
  duringSync: { peak: MemorySample; atPeakRss: MemorySample; samples: number };
  /** User + system CPU of this process from start until ready, ms. */
  syncCpuMs: number;
  /** The memory-reducing GC the process ran when the initial sync's burst of passes was over (needs gc exposed). */
  release?: MemoryRelease;
  /** RSS and heap one second after `memory`, with no GC between. */
  memoryOneSecondLater: MemorySample;
  /** Where the RSS was when `memory` was taken (MB; Linux only). */
  residentMB?: Record<string, number>;
  /** V8's heap spaces (committed size, MB) where `memory` was taken: which space holds the slack. */
  heapSpacesMB: Record<string, number>;
  memoryAfterIdle: MemorySample;
  idle: {
    ms: number;
    requests: number;
    writes: number;
    byVerb: Record<string, number>;
    watchReconnects: number;
    requestsPerMinute: number;
    /** User + system CPU of this process in the idle window, per minute. */
    cpuMsPerMinute: number;
  };
  /** Requests still waiting for a socket when the idle window ended (a saturated pool). */
  queuedAtEnd: number;
  /** Out-of-band change to one ConfigMap in the first and the last environment: ms until healed, or null. */
  healProbe?: { first: number | null; last: number | null };
  /** healTrials: ms from each out-of-band PATCH until the ConfigMap is back (null: not within 30 s). */
  heals?: Array<number | null>;
  /** With a second cluster: which cluster each of `heals` was on. */
  healClusters?: Array<"first" | "second">;
  /** With a second cluster: idle requests per minute made to each. */
  idleByCluster?: { first: number; second: number };
  /** refreshTrials: ms from a nudge of one environment (a webhook's effect) to its syncStarted event. */
  refreshes?: number[];
}

const PROBE_TIMEOUT_MS = 30_000;

/** A copy of the second cluster's kubeconfig whose one context is named `second`. */
function secondContextFile(kubeconfig: string): string {
  const doc = parse(readFileSync(kubeconfig, "utf8"));
  doc.contexts = [{ ...doc.contexts[0], name: "second" }];
  doc["current-context"] = "second";
  const file = join(mkdtempSync(join(tmpdir(), "syncward-bench-second-")), "kubeconfig");
  writeFileSync(file, stringify(doc));
  return file;
}

/** Changes settings-000 in `namespace` out of band; resolves with ms until it is back, or null. */
async function healProbe(
  admin: KubeClient,
  namespace: string,
  name = "settings-000",
): Promise<number | null> {
  const path = `/api/v1/namespaces/${namespace}/configmaps/${name}`;
  const start = performance.now();
  await admin.request("PATCH", path, {
    body: { data: { INDEX: "changed out of band" } },
    contentType: "application/merge-patch+json",
  });
  while (performance.now() - start < PROBE_TIMEOUT_MS) {
    const cm = await admin.request<{ data?: Record<string, string> }>("GET", path);
    if (cm.data?.INDEX === String(Number(name.slice(-3)))) return performance.now() - start;
    await sleep(10);
  }
  return null;
}

export interface WorkerOutput {
  baseline: MemorySample;
  gcAvailable: boolean;
  namespaces: number;
  scenarios: ScenarioResult[];
}

function memory(): MemorySample {
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

/** Samples memory every `everyMs` until stopped: each figure's maximum and the sample of the highest RSS. */
function memorySampler(everyMs: number): { stop: () => ScenarioResult["duringSync"] } {
  const peak = memory();
  let atPeakRss = { ...peak };
  let samples = 1;
  // SYNCWARD_BENCH_SNAPSHOT_MB: one heap snapshot the first time the heap in use passes that size
  // (to see what the sync holds at its peak; the snapshot itself stalls the process).
  let snapshotAt = Number(process.env.SYNCWARD_BENCH_SNAPSHOT_MB ?? 0) * 1e6;
  const timer = setInterval(() => {
    const m = memory();
    samples++;
    if (snapshotAt > 0 && m.heapUsed > snapshotAt) {
      snapshotAt = 0;
      progress(`memory: heap snapshot at ${Math.round(m.heapUsed / 1e6)} MB: ${writeHeapSnapshot()}`);
    }
    for (const k of Object.keys(peak) as Array<keyof MemorySample>) peak[k] = Math.max(peak[k], m[k]);
    if (m.rss >= atPeakRss.rss) atPeakRss = m;
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { peak, atPeakRss, samples };
    },
  };
}

/** Where the RSS is (Linux): glibc's main malloc heap, other anonymous memory (V8's pages, malloc arenas, stacks), files. */
function residentMB(): Record<string, number> | undefined {
  let smaps: string;
  try {
    smaps = readFileSync("/proc/self/smaps", "utf8");
  } catch {
    return undefined;
  }
  const out = { mallocHeap: 0, anonymous: 0, files: 0 };
  let kind: keyof typeof out = "anonymous";
  for (const line of smaps.split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) kind = head[1] === "[heap]" ? "mallocHeap" : head[1]?.startsWith("/") ? "files" : "anonymous";
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]) * 1024;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Math.round(v / 1e5) / 10]));
}

function heapSpacesMB(): Record<string, number> {
  return Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.physical_space_size / 1e5) / 10]),
  );
}

function configMaps(env: number, count: number): string {
  const docs: string[] = [];
  for (let i = 0; i < count; i++) {
    docs.push(
      stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `settings-${String(i).padStart(3, "0")}`, labels: { app: `svc-${i % 10}` } },
        data: { ENV: `e${env}`, INDEX: String(i), "config.yaml": `replicas: ${i % 5}\nfeature: on\n` },
      }),
    );
  }
  return docs.join("---\n");
}

function pendingRequests(kube: KubeClient): number {
  const agent = (kube as unknown as { agent: { requests: Record<string, unknown[]> } }).agent;
  return Object.values(agent.requests ?? {}).reduce((n, q) => n + q.length, 0);
}

/** The clusters of a run: the first's admin, and for each environment the admin of its cluster. */
interface Admins {
  first: KubeClient;
  of(env: number): KubeClient;
  onSecond(env: number): boolean;
  /** The controller's client of the second cluster, once made (its request counts). */
  secondClient(): KubeClient | undefined;
}

async function runScenario(
  input: WorkerInput,
  admins: Admins,
  probeNamespaces: [string, string],
  all: { namespaces: string[]; names: string[]; refresh: (env: number, k: number) => string },
  scenario: Scenario,
  build: (kube: KubeClient, emit: (e: ReconcilerEvent) => void) => Reconciler,
  head: string,
): Promise<ScenarioResult> {
  const kube = KubeClient.fromKubeconfig({ kubeconfig: input.kubeconfig, maxSockets: scenario.maxSockets });
  const synced = new Set<string>();
  const started = new Map<string, () => void>();
  const reconciler = build(kube, (e) => {
    if (e.type === "synced" && e.outcome.phase === "Succeeded" && e.revision === head) synced.add(e.instance);
    if (e.type === "syncStarted") started.get(e.env)?.();
  });
  const start = performance.now();
  const cpuAtStart = process.cpuUsage();
  const sampler = memorySampler(200);
  progress(`memory/${scenario.name}: starting ${input.envs} environments`);
  reconciler.start();
  const deadline = Date.now() + scenario.readyTimeoutMs;
  let ready = false;
  let lastReport = Date.now();
  // Ready: every environment synced at head (first scenario) or known synced from its state, every
  // controller running (leases) and no pass in flight.
  const store = reconciler.store;
  const instances = reconciler.environments.map((c) => c.instance);
  while (Date.now() < deadline) {
    if (reconciler.active.length === input.envs) {
      const idle = Promise.all(reconciler.environments.map((c) => c.idle())).then(() => true);
      if (await Promise.race([idle, sleep(2000).then(() => false)])) {
        if (synced.size < input.envs) {
          const states = await mapLimit(instances, 8, (i) => store.load(i));
          for (const s of states) if (s.lastSyncedRevision === head) synced.add(s.environment);
        }
        if (synced.size >= input.envs) {
          ready = true;
          break;
        }
      }
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      progress(
        `memory/${scenario.name}: ${synced.size}/${input.envs} synced, ${reconciler.active.length} active, ` +
          `${kube.counts.requests} requests, ${pendingRequests(kube)} waiting for a socket`,
      );
    }
    await sleep(500);
  }
  const readyMs = performance.now() - start;
  const syncCpu = process.cpuUsage(cpuAtStart);
  const duringSync = sampler.stop();
  const idleFor = scenario.idleMs ?? input.idleMs;
  const requestsUntilReady = kube.counts.requests;
  progress(
    `memory/${scenario.name}: ${ready ? "ready" : "NOT ready"} after ${(readyMs / 1000).toFixed(1)}s (${synced.size} synced); idling ${idleFor / 1000}s`,
  );
  await sleep(5000 + (scenario.settleMs ?? 0));
  gc();
  const mem = memory();
  const spaces = heapSpacesMB();
  const resident = residentMB();
  // The same, one second later (no GC between): what the GC above freed but V8's background
  // unmapping had not yet returned when it was read.
  const oneSecondLater = sleep(1000).then(memory);
  const before = { ...kube.counts, byVerb: { ...kube.counts.byVerb } };
  const secondBefore = admins.secondClient()?.counts.requests ?? 0;
  const idleStart = performance.now();
  const cpuBefore = process.cpuUsage();
  await sleep(idleFor);
  const idleMs = performance.now() - idleStart;
  const cpuIdle = process.cpuUsage(cpuBefore);
  const after = { ...kube.counts, byVerb: { ...kube.counts.byVerb } };
  const secondRequests = (admins.secondClient()?.counts.requests ?? 0) - secondBefore;
  const syncedCount = synced.size;
  const byVerb: Record<string, number> = {};
  for (const [verb, n] of Object.entries(after.byVerb)) {
    const d = n - (before.byVerb[verb] ?? 0);
    if (d > 0) byVerb[verb] = d;
  }
  const requests = after.requests - before.requests;
  const queuedAtEnd = pendingRequests(kube);
  const active = reconciler.active.length;
  gc();
  const memoryAfterIdle = memory();
  let probe: ScenarioResult["healProbe"];
  if (scenario.probe ?? true) {
    const [first, last] = await Promise.all(
      probeNamespaces.map((ns, i) => healProbe(admins.of(i === 0 ? 0 : input.envs - 1), ns)),
    );
    probe = { first: first ?? null, last: last ?? null };
    progress(`memory/${scenario.name}: heal probe ${JSON.stringify(probe)}`);
  }
  // One at a time, each in another environment (and another of its ConfigMaps), while the rest idle.
  const heals: Array<number | null> = [];
  const healClusters: Array<"first" | "second"> = [];
  for (let k = 0; k < (scenario.healTrials ?? 0); k++) {
    const env = Math.floor(((k + 0.5) * input.envs) / (scenario.healTrials ?? 1));
    const name = `settings-${String(k % input.objects).padStart(3, "0")}`;
    heals.push(await healProbe(admins.of(env), all.namespaces[env] as string, name));
    healClusters.push(admins.onSecond(env) ? "second" : "first");
    await sleep(100);
  }
  const refreshes: number[] = [];
  for (let k = 0; k < (scenario.refreshTrials ?? 0); k++) {
    const env = Math.floor(((k + 0.5) * input.envs) / (scenario.refreshTrials ?? 1));
    const name = all.names[env] as string;
    all.refresh(env, k);
    const began = new Promise<number>((resolve) => {
      started.set(name, () => resolve(performance.now()));
    });
    const at = performance.now();
    reconciler.controller(name).nudge("push", "bench");
    const t = await Promise.race([began, sleep(30_000).then(() => Number.NaN)]);
    started.delete(name);
    refreshes.push(t - at);
    await reconciler.controller(name).idle();
  }
  if (heals.length + refreshes.length > 0)
    progress(
      `memory/${scenario.name}: heals ${JSON.stringify(heals)} refreshes ${JSON.stringify(refreshes.map(Math.round))}`,
    );
  await Promise.race([reconciler.stop(), sleep(60_000)]);
  kube.close();
  return {
    scenario,
    ready,
    readyMs,
    synced: syncedCount,
    active,
    requestsUntilReady,
    memory: mem,
    duringSync,
    syncCpuMs: (syncCpu.user + syncCpu.system) / 1000,
    heapSpacesMB: spaces,
    residentMB: resident,
    memoryOneSecondLater: await oneSecondLater,
    release: lastMemoryRelease(),
    memoryAfterIdle,
    idle: {
      ms: idleMs,
      requests,
      writes: after.writes - before.writes,
      byVerb,
      watchReconnects: byVerb.WATCH ?? 0,
      requestsPerMinute: (requests / idleMs) * 60_000,
      cpuMsPerMinute: (((cpuIdle.user + cpuIdle.system) / 1000) * 60_000) / idleMs,
    },
    queuedAtEnd,
    healProbe: probe,
    heals,
    refreshes,
    ...(input.secondKubeconfig
      ? {
          healClusters,
          idleByCluster: {
            first: (requests / idleMs) * 60_000,
            second: (secondRequests / idleMs) * 60_000,
          },
        }
      : {}),
  };
}

async function main(input: WorkerInput): Promise<WorkerOutput> {
  const gcAvailable = gc();
  await sleep(200);
  gc();
  const baseline = memory();
  const admin = KubeClient.fromKubeconfig({ kubeconfig: input.kubeconfig });
  const namespaces = new Namespaces(admin, "bench-mem");
  const secondAdmin = input.secondKubeconfig
    ? KubeClient.fromKubeconfig({ kubeconfig: input.secondKubeconfig })
    : undefined;
  const secondNamespaces = secondAdmin ? new Namespaces(secondAdmin, "bench-mem") : undefined;
  const onSecond = (env: number) => secondAdmin !== undefined && env >= Math.ceil(input.envs / 2);
  const secondContext = input.secondKubeconfig ? secondContextFile(input.secondKubeconfig) : undefined;
  let clusters: Clusters | undefined;
  const admins: Admins = {
    first: admin,
    of: (env) => (onSecond(env) ? (secondAdmin as KubeClient) : admin),
    onSecond,
    secondClient: () => clusters?.connected.get("second"),
  };
  const repo = makeRepo();
  const cache = mkdtempSync(join(tmpdir(), "syncward-bench-trees-"));
  try {
    const stateNs = await namespaces.create("state");
    const envNames = Array.from({ length: input.envs }, (_, i) => `e${String(i).padStart(3, "0")}`);
    const envNs = await mapLimit(envNames, 8, (name) =>
      onSecond(envNames.indexOf(name))
        ? (secondNamespaces as Namespaces).create(name)
        : namespaces.create(name),
    );
    const files: Record<string, string> = {};
    envNames.forEach((name, i) => {
      files[`envs/${name}/configmaps.yaml`] = configMaps(i, input.objects);
    });
    const head = repo.commit(files, "environments");
    const refresh = (env: number, k: number) =>
      repo.commit(
        {
          [`envs/${envNames[env]}/configmaps.yaml`]: `${configMaps(env, input.objects)}---\n${stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "refreshed" }, data: { TRIAL: String(k) } })}`,
        },
        `refresh ${k}`,
      );
    const config = parseConfig(
      stringify({
        environments: envNames.map((name, i) => ({
          name,
          source: { path: `envs/${name}` },
          destination: onSecond(i) ? { namespace: envNs[i], cluster: "second" } : { namespace: envNs[i] },
          syncPolicy: { automated: { prune: true, selfHeal: true } },
        })),
      }),
    );
    const source = new LocalGitSource(repo.dir, cache);
    const results: ScenarioResult[] = [];
    for (const scenario of input.scenarios) {
      results.push(
        await runScenario(
          input,
          admins,
          [envNs[0] as string, envNs.at(-1) as string],
          { namespaces: envNs, names: envNames, refresh },
          scenario,
          (client, emit) => {
            clusters?.close();
            clusters = secondContext
              ? new Clusters({ own: client, kubeconfig: Clusters.kubeconfigOf(secondContext) })
              : undefined;
            return new Reconciler({
              app: "bench",
              config,
              client,
              clusters,
              source,
              emit,
              log: pino({ level: process.env.SYNCWARD_BENCH_LOG ?? "silent" }, pino.destination(2)),
              stateNamespace: stateNs,
              identity: `bench-${process.pid}`,
              leases: scenario.leases,
              pollIntervalMs: scenario.pollIntervalMs,
              watch: scenario.watch,
            });
          },
          head,
        ),
      );
    }
    return { baseline, gcAvailable, namespaces: input.envs + 1, scenarios: results };
  } finally {
    progress("memory: removing namespaces");
    await namespaces.removeAll();
    // The second cluster is the benchmark's own, thrown away after the run (an API-only plane has
    // no namespace controller to finish deleting namespaces).
    clusters?.close();
    secondAdmin?.close();
    admin.close();
    rmSync(repo.dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  }
}

const input = JSON.parse(process.argv[2] ?? "{}") as WorkerInput;
main(input).then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
