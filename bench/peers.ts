// Issue 19: syncward against Flux's engine on the same API server, the same files, one run. The Flux
// side is bench/peers/flux, a Go program on github.com/fluxcd/pkg/ssa (built from the Go module
// proxy by bench/peers/build.sh) doing what kustomize-controller does with a set of objects:
// ApplyAllStaged with its options, then WaitForSet. Pairs alternate which side goes first; each side
// gets a fresh namespace, and each pair's namespaces are removed (and waited for) before the next.
//
// Per pair and side: a cold sync, the time until every Deployment is ready (Flux: its WaitForSet;
// syncward: the sync, then a poll of the Deployments every 500 ms, since syncward's last wave does
// not wait), and a no-op resync with its write requests. Flux finds drift only when it reconciles
// (every `.spec.interval`), so for drift the Flux side is a reconcile after an out-of-band scale
// (what each interval costs it, and the one write it makes); syncward's side is the self-heal
// benchmark in an environment of the same size, timed to the revert through its watches.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseAllDocuments, stringify } from "yaml";
import { type EngineRun, runEngine } from "./cold-sync.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import { selfHealLatency } from "./selfheal-latency.ts";
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

/** One pass of the Flux peer, as it prints it (bench/peers/flux/main.go). */
interface FluxPass {
  pass: string;
  ms: number;
  readMs: number;
  applyMs: number;
  waitMs: number;
  objects: number;
  requests: number;
  byVerb: Record<string, number>;
  dryRuns: number;
  writes: number;
  actions: Record<string, number>;
  error?: string;
  options: Record<string, unknown>;
}

/** kustomize-controller's interval is set per Kustomization; Flux's own examples use 10m. */
const FLUX_INTERVAL_S = 600;

/** Builds bench/peers/NAME from the Go module proxy (cached); returns the binary. */
export function buildPeer(name: "flux" | "argo"): string {
  progress(`${name} peer: building (bench/peers/build.sh ${name})`);
  return execFileSync("bash", [join(import.meta.dirname, "peers", "build.sh"), name], {
    stdio: ["ignore", "pipe", "inherit"],
  })
    .toString()
    .trim();
}

/** One sync of Argo CD's gitops-engine agent, from the result table it prints after each sync. */
interface ArgoSync {
  ms: number;
  results: number;
  /** Results other than "unchanged": objects its kubectl-style apply wrote. */
  writes: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/**
 * gitops-engine's example agent, unchanged: it syncs the repository's HEAD into `namespace` when it
 * starts (after building its cluster cache of that namespace) and again on POST /api/v1/sync,
 * printing a RESOURCE/RESULT table after each sync. Its own timer is set past the benchmark.
 */
class ArgoAgent {
  private readonly child: ChildProcess;
  private out = "";
  private tables: Array<{ at: number; lines: string[] }> = [];
  private waiter?: () => void;
  private stderrTail = "";

  private constructor(
    bin: string,
    ctx: BenchContext,
    dir: string,
    namespace: string,
    private readonly port: number,
    private readonly objects: number,
  ) {
    this.child = spawn(
      bin,
      [
        dir,
        "--path",
        ".",
        "--kubeconfig",
        ctx.kubeconfig,
        "--namespaced",
        "--default-namespace",
        namespace,
        "--port",
        String(port),
        "--resync-seconds",
        "86400",
        "--prune=false",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (c: string) => this.onData(c));
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (c: string) => {
      this.stderrTail = (this.stderrTail + c).slice(-4000);
    });
  }

  static async start(bin: string, ctx: BenchContext, dir: string, namespace: string, objects: number) {
    const started = performance.now();
    const agent = new ArgoAgent(bin, ctx, dir, namespace, await freePort(), objects);
    return { agent, started };
  }

  private onData(chunk: string) {
    this.out += chunk;
    const blocks = this.out.split(/^RESOURCE\s+RESULT\s*$/m);
    const last = blocks.at(-1) ?? "";
    const lines = last.split("\n").filter((l) => l.trim());
    if (blocks.length > 1 && lines.length >= this.objects) {
      this.tables.push({ at: performance.now(), lines });
      this.out = "";
      this.waiter?.();
    }
  }

  /** Resolves with the next complete result table (or rejects after `timeoutMs`). */
  async nextSync(since: number, seen: number, timeoutMs = 600_000): Promise<ArgoSync> {
    const deadline = performance.now() + timeoutMs;
    while (this.tables.length <= seen) {
      if (performance.now() > deadline || this.child.exitCode !== null)
        throw new Error(
          `argo agent: no sync result (${this.child.exitCode !== null ? `exited ${this.child.exitCode}` : "timed out"}): ${this.stderrTail.slice(-1500)}`,
        );
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 500);
      });
    }
    const t = this.tables[seen]!;
    return {
      ms: t.at - since,
      results: t.lines.length,
      writes: t.lines.filter((l) => !/unchanged\s*$/.test(l)).length,
    };
  }

  get syncs(): number {
    return this.tables.length;
  }

  async resync(): Promise<ArgoSync> {
    const seen = this.syncs;
    const start = performance.now();
    await fetch(`http://127.0.0.1:${this.port}/api/v1/sync`, { method: "POST" });
    return this.nextSync(start, seen);
  }

  stop() {
    this.child.kill("SIGTERM");
  }
}

/**
 * The manifests with their namespace written in, as a git repository: the agent treats an object
 * without one as cluster-scoped and refuses it in namespaced mode (and in cluster mode it would
 * cache the whole shared cluster first). An Argo CD Application gets the same from its destination.
 */
function namespacedRepo(dir: string, namespace: string): string {
  const repo = mkdtempSync(join(tmpdir(), "syncward-bench-argo-"));
  for (const rel of readdirSync(dir, { recursive: true }) as string[]) {
    if (!rel.endsWith(".yaml")) continue;
    const docs = parseAllDocuments(readFileSync(join(dir, rel), "utf8")).map((d) => {
      const o = d.toJS() as { metadata: Record<string, unknown> };
      return stringify({ ...o, metadata: { ...o.metadata, namespace } });
    });
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), docs.join("---\n"));
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo });
  git("init", "-q", ".");
  git("add", "-A");
  git("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "manifests");
  return repo;
}

async function runArgo(
  bin: string,
  ctx: BenchContext,
  dir: string,
  namespace: string,
  objects: number,
  admin: ReturnType<typeof client>,
) {
  const repo = namespacedRepo(dir, namespace);
  const { agent, started } = await ArgoAgent.start(bin, ctx, repo, namespace, objects);
  try {
    const cold = await agent.nextSync(started, 0);
    await waitDeploymentsReady(admin, namespace);
    const noop = await agent.resync();
    return { cold, noop };
  } finally {
    agent.stop();
    rmSync(repo, { recursive: true, force: true });
  }
}

function runFlux(bin: string, ctx: BenchContext, dir: string, namespace: string, passes: string[]) {
  return new Promise<FluxPass[]>((resolve, reject) => {
    execFile(
      bin,
      ["--kubeconfig", ctx.kubeconfig, "--dir", dir, "--namespace", namespace, "--passes", passes.join(",")],
      { maxBuffer: 16 * 2 ** 20 },
      (err, stdout, stderr) => {
        const lines = stdout
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as FluxPass);
        const failed = lines.find((l) => l.error);
        if (failed) reject(new Error(`flux peer ${failed.pass} pass failed: ${failed.error}`));
        else if (err) reject(new Error(`flux peer failed: ${stderr.slice(-2000) || err.message}`));
        else resolve(lines);
      },
    );
  });
}

interface Pair {
  order: string[];
  loadAverage: { start: number[]; end: number[] };
  syncward: { cold: EngineRun; readyMs: number; noop: EngineRun };
  flux: { cold: FluxPass; noop: FluxPass; drift: FluxPass };
  argo?: { cold: ArgoSync; noop: ArgoSync };
}

const strip = (r: EngineRun) => ({ ...r, inventory: undefined });

async function pair(
  ctx: BenchContext,
  bins: { flux: string; argo?: string },
  dir: string,
  objects: number,
  index: number,
): Promise<Pair> {
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-peers");
  try {
    const ns = {
      syncward: await namespaces.create("syncward"),
      flux: await namespaces.create("flux"),
      argo: await namespaces.create("argo"),
    };
    const sides = bins.argo ? ["syncward", "flux", "argo"] : ["syncward", "flux"];
    // Each side takes each place in turn.
    const order = sides.map((_, i) => sides[(i + index) % sides.length] as string);
    const start = loadavg();
    const p: Partial<Pair> = {};
    for (const side of order) {
      if (side === "syncward") {
        const began = performance.now();
        const cold = await runEngine(ctx, dir, ns.syncward);
        await waitDeploymentsReady(admin, ns.syncward);
        const readyMs = performance.now() - began;
        p.syncward = { cold, readyMs, noop: await runEngine(ctx, dir, ns.syncward, cold.inventory) };
      } else if (side === "argo" && bins.argo) {
        p.argo = await runArgo(bins.argo, ctx, dir, ns.argo, objects, admin);
      } else {
        const bin = bins.flux;
        const [cold, noop] = await runFlux(bin, ctx, dir, ns.flux, ["cold", "noop"]);
        // Drift as a user makes it (kubectl scale), then Flux's next reconcile, which reverts it.
        await admin.request("PATCH", `/apis/apps/v1/namespaces/${ns.flux}/deployments/app-0000/scale`, {
          body: { spec: { replicas: 3 } },
          contentType: "application/merge-patch+json",
        });
        const [drift] = await runFlux(bin, ctx, dir, ns.flux, ["drift"]);
        p.flux = { cold: cold!, noop: noop!, drift: drift! };
      }
    }
    const done = { ...p, order, loadAverage: { start, end: loadavg() } } as Pair;
    progress(
      `peers pair ${index + 1}: cold syncward ${ms(done.syncward.cold.ms)} (ready ${ms(done.syncward.readyMs)}), ` +
        `flux apply ${ms(done.flux.cold.readMs + done.flux.cold.applyMs)} (ready ${ms(done.flux.cold.ms)}); ` +
        `no-op syncward ${ms(done.syncward.noop.ms)} (${done.syncward.noop.writes} writes), flux ${ms(done.flux.noop.ms)} (${done.flux.noop.writes} writes)` +
        (done.argo
          ? `; argo agent cold ${ms(done.argo.cold.ms)}, no-op ${ms(done.argo.noop.ms)} (${done.argo.noop.writes} writes)`
          : "") +
        `; load ${start[0]?.toFixed(2)}`,
    );
    return done;
  } finally {
    await namespaces.removeAll();
    admin.close();
  }
}

function versus(
  name: string,
  ours: number[],
  theirs: number[],
  o: { baseline: string; target: string; atLeast: number; details?: Record<string, unknown> },
): Measurement {
  const ratios = ours.map((v, i) => (theirs[i] ?? Number.NaN) / v);
  return {
    name,
    unit: "ms",
    syncward: median(ours),
    baseline: { name: o.baseline, value: median(theirs) },
    ratio: median(ratios),
    ratioMeaning: "Flux time / syncward time, per pair",
    target: o.target,
    met: median(ratios) >= o.atLeast,
    samples: { syncward: ours, baseline: theirs, ratio: ratios },
    details: o.details,
  };
}

export async function peers(ctx: BenchContext): Promise<BenchResult> {
  const apps = Number(process.env.SYNCWARD_BENCH_APPS ?? (ctx.quick ? 20 : 200));
  const pairs = Number(process.env.SYNCWARD_BENCH_PAIRS ?? (ctx.quick ? 2 : 3));
  const count = apps * KINDS_PER_APP;
  const bins = {
    flux: buildPeer("flux"),
    argo: process.env.SYNCWARD_BENCH_ARGO === "0" ? undefined : buildPeer("argo"),
  };
  const dir = writeManifests(apps);
  progress(`peers: ${count} objects in ${dir}, ${pairs} pairs, peers ${JSON.stringify(bins)}`);
  const runs: Pair[] = [];
  try {
    for (let i = 0; i < pairs; i++) runs.push(await pair(ctx, bins, dir, count, i));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const heal = await selfHealLatency(ctx, {
    objects: count,
    trials: Number(process.env.SYNCWARD_BENCH_HEAL_TRIALS ?? (ctx.quick ? 6 : 30)),
  });
  const col = (pick: (p: Pair) => number) => runs.map(pick);
  const label = `${count.toLocaleString("en")} objects`;
  const fluxOptions = runs[0]?.flux.cold.options;
  const drift = col((p) => p.flux.drift.ms);
  const healMedian = heal.measurements.find(
    (m) => m.name.includes("replica edits, ") && m.name.endsWith("median"),
  );
  const healP99 = heal.measurements.find((m) => m.name.includes("replica edits, ") && m.name.endsWith("p99"));
  const argoRuns = runs.filter((p) => p.argo);
  const argoCol = (pick: (p: Pair) => number) => argoRuns.map(pick);
  const argoMeasurements: Measurement[] =
    argoRuns.length === 0
      ? []
      : [
          {
            ...versus(
              `cold sync, ${label}, vs Argo CD gitops-engine agent (v3.6.1)`,
              argoCol((p) => p.syncward.cold.ms),
              argoCol((p) => p.argo!.cold.ms),
              {
                baseline: "gitops-engine agent: start, cluster cache, dry run + kubectl apply",
                target: "(no target)",
                atLeast: 0,
              },
            ),
            ratioMeaning: "Argo agent time / syncward time, per pair",
            met: undefined,
          },
          {
            ...versus(
              `no-op resync, ${label}, vs Argo CD gitops-engine agent`,
              argoCol((p) => p.syncward.noop.ms),
              argoCol((p) => p.argo!.noop.ms),
              {
                baseline: "gitops-engine agent, POST /api/v1/sync with nothing changed",
                target: "(no target)",
                atLeast: 0,
                details: { argoWrites: argoCol((p) => p.argo!.noop.writes) },
              },
            ),
            ratioMeaning: "Argo agent time / syncward time, per pair",
            met: undefined,
          },
        ];
  const measurements: Measurement[] = [
    versus(
      `cold sync, ${label}, vs Flux ApplyAllStaged (no wait)`,
      col((p) => p.syncward.cold.ms),
      col((p) => p.flux.cold.readMs + p.flux.cold.applyMs),
      {
        baseline: "Flux ssa ApplyAllStaged (kustomize-controller's options)",
        target: ">= 1 (at least as fast)",
        atLeast: 1,
        details: {
          fluxRequests: median(col((p) => p.flux.cold.requests)),
          fluxDryRuns: median(col((p) => p.flux.cold.dryRuns)),
          syncwardRequests: median(col((p) => p.syncward.cold.requests)),
          fluxOptions,
        },
      },
    ),
    versus(
      `cold sync to every Deployment ready, ${label}, vs Flux ApplyAllStaged + WaitForSet`,
      col((p) => p.syncward.readyMs),
      col((p) => p.flux.cold.ms),
      {
        baseline: "Flux ssa ApplyAllStaged + WaitForSet (5s poll)",
        target: ">= 1 (at least as fast)",
        atLeast: 1,
        details: { fluxWaitMs: median(col((p) => p.flux.cold.waitMs)) },
      },
    ),
    versus(
      `no-op resync, ${label}, vs Flux (dry-run apply per object)`,
      col((p) => p.syncward.noop.ms),
      col((p) => p.flux.noop.ms),
      {
        baseline: "Flux ssa ApplyAllStaged + WaitForSet, nothing changed",
        target: "<= 1/2 of Flux's time (ratio >= 2)",
        atLeast: 2,
        details: {
          syncwardRequests: median(col((p) => p.syncward.noop.requests)),
          fluxRequests: median(col((p) => p.flux.noop.requests)),
          fluxDryRuns: median(col((p) => p.flux.noop.dryRuns)),
          fluxApplyOnlyMs: median(col((p) => p.flux.noop.readMs + p.flux.noop.applyMs)),
        },
      },
    ),
    {
      name: `no-op resync, ${label}, write requests, vs Flux`,
      unit: "writes",
      syncward: median(col((p) => p.syncward.noop.writes)),
      baseline: { name: "Flux", value: median(col((p) => p.flux.noop.writes)) },
      target: "0 writes",
      met: Math.max(...col((p) => p.syncward.noop.writes)) === 0,
      samples: { syncward: col((p) => p.syncward.noop.writes), baseline: col((p) => p.flux.noop.writes) },
    },
    {
      name: `drift: syncward's watch, drift-to-revert median, ${label}; Flux: noticed at its next interval`,
      unit: "ms",
      syncward: healMedian?.syncward ?? Number.NaN,
      baseline: {
        name: `Flux: up to one interval (${FLUX_INTERVAL_S}s as in Flux's examples; median half of it) + one reconcile`,
        value: (FLUX_INTERVAL_S * 1000) / 2 + median(drift),
      },
      target: "p50 < 60 ms, p99 < 250 ms",
      met:
        (healMedian?.syncward ?? Number.POSITIVE_INFINITY) < 60 &&
        (healP99?.syncward ?? Number.POSITIVE_INFINITY) < 250,
      samples: { syncward: healMedian?.samples.syncward ?? [] },
      details: {
        syncwardP99Ms: healP99?.syncward,
        fluxReconcileAfterDriftMs: median(drift),
        fluxReconcileRequests: median(col((p) => p.flux.drift.requests)),
        fluxReconcileWrites: median(col((p) => p.flux.drift.writes)),
        fluxIntervalSeconds: FLUX_INTERVAL_S,
      },
    },
    ...argoMeasurements,
  ];
  return {
    measurements,
    data: {
      objects: count,
      pairs: runs.map((p) => ({
        ...p,
        syncward: { ...p.syncward, cold: strip(p.syncward.cold), noop: strip(p.syncward.noop) },
      })),
      selfHeal: heal.data,
    },
  };
}
