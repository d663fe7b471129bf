// `npm run bench [-- [--quick] [name ...]]`: runs the chosen benchmarks (by default every one the
// issue lists; `plane`, `build`, `promotion`, `previews` and `rollback` are opt-in), prints a table and writes bench/results/latest.json
// (`--quick`: 100 objects and 10 trials each, written to bench/results/quick.json). The cluster is
// the local control plane (started here when it is not up, and then stopped again) or the one named
// by SYNCWARD_BENCH_KUBECONFIG. Each benchmark makes namespaces of its own and removes them.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { down, PlaneError, up } from "../tools/cluster/plane.ts";
import { coldSync } from "./cold-sync.ts";
import { controllerMemory } from "./controller-memory.ts";
import { crdRender } from "./crd-render.ts";
import { diffPlanCpu } from "./diff-plan-cpu.ts";
import { githubRequests } from "./github-requests.ts";
import { healthLuaCpu, healthLuaResync } from "./health-lua.ts";
import { helmRender } from "./helm-render.ts";
import { multiCluster } from "./multi-cluster.ts";
import { peers } from "./peers.ts";
import { coldBuildBench, planeBench } from "./plane.ts";
import { previews } from "./previews.ts";
import { promotionLatency } from "./promotion-latency.ts";
import { replicas } from "./replicas.ts";
import { rollbackLatency } from "./rollback.ts";
import { scale } from "./scale.ts";
import { selfHealLatency } from "./selfheal-latency.ts";
import { type BenchContext, type BenchResult, type Measurement, ms, progress } from "./support.ts";
import { webhookLatency } from "./webhook-latency.ts";

const BENCHMARKS: Record<
  string,
  { needsCluster: boolean; run: (ctx: BenchContext) => Promise<BenchResult> }
> = {
  sync: { needsCluster: true, run: coldSync },
  selfheal: { needsCluster: true, run: selfHealLatency },
  webhook: { needsCluster: true, run: webhookLatency },
  diff: { needsCluster: false, run: diffPlanCpu },
  health: { needsCluster: false, run: healthLuaCpu },
  "health-resync": { needsCluster: true, run: healthLuaResync },
  memory: { needsCluster: true, run: controllerMemory },
  github: { needsCluster: true, run: githubRequests },
  plane: { needsCluster: false, run: () => planeBench() },
  build: { needsCluster: false, run: () => coldBuildBench() },
  helm: { needsCluster: false, run: helmRender },
  "crd-render": { needsCluster: false, run: crdRender },
  peers: { needsCluster: true, run: peers },
  scale: { needsCluster: true, run: scale },
  replicas: { needsCluster: true, run: replicas },
  "multi-cluster": { needsCluster: true, run: multiCluster },
  promotion: { needsCluster: true, run: promotionLatency },
  previews: { needsCluster: true, run: previews },
  rollback: { needsCluster: true, run: rollbackLatency },
};
type Name = string;
const DEFAULT: Name[] = [
  "diff",
  "health",
  "webhook",
  "github",
  "selfheal",
  "sync",
  "health-resync",
  "memory",
  "multi-cluster",
];

const latestFile = join(import.meta.dirname, "results", "latest.json");
/** `--quick` results go elsewhere, so a fast check never replaces the figures of a full run. */
const quickFile = join(import.meta.dirname, "results", "quick.json");

function select(args: string[]): Name[] {
  const unknown = args.filter((a) => !(a in BENCHMARKS));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(", ")}\nusage: npm run bench [-- ${Object.keys(BENCHMARKS).join(" ")}]\n`,
    );
    process.exit(2);
  }
  return args.length > 0 ? args : DEFAULT;
}

function output(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return "unknown";
  }
}

type Machine = ReturnType<typeof machine>;

function machine(kubeconfig: string | undefined) {
  const cpu = cpus();
  const memoryGiB = Math.round(totalmem() / 2 ** 30);
  return {
    description: `${cpu.length} x ${cpu[0]?.model ?? "unknown CPU"}, ${memoryGiB} GiB, Node ${process.version}; the API server on the same cores`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    memoryGiB,
    node: process.version,
    kubectl: output("kubectl", ["version", "--client", "-o", "json"]).match(/"gitVersion":\s*"([^"]+)"/)?.[1],
    server: kubeconfig
      ? output("kubectl", ["--kubeconfig", kubeconfig, "version", "-o", "json"]).match(
          /"serverVersion":[\s\S]*?"gitVersion":\s*"([^"]+)"/,
        )?.[1]
      : undefined,
    commit: output("git", ["rev-parse", "--short", "HEAD"]),
    /** Files under src/ and tools/ that differ from that commit (other work in progress). */
    uncommitted: output("git", ["status", "--porcelain", "--", "src", "tools"]).split("\n").filter(Boolean),
    loadAverage: loadavg(),
  };
}

const fmt = (v: number | undefined, unit: string): string => {
  if (v === undefined || Number.isNaN(v)) return "";
  if (unit === "ms") return ms(v);
  return `${Number.isInteger(v) ? v.toLocaleString("en") : v.toFixed(2)} ${unit}`;
};

function table(measurements: Measurement[]): string {
  const header = ["benchmark", "syncward", "baseline", "ratio", "target", "met"];
  const rows = measurements.map((m) => [
    m.name,
    fmt(m.syncward, m.unit),
    m.baseline ? fmt(m.baseline.value, m.unit) : "",
    m.ratio === undefined ? "" : m.ratio.toFixed(2),
    m.target ?? "",
    m.met === undefined ? "" : m.met ? "yes" : "NO",
  ]);
  const all = [header, ...rows];
  const width = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  const right = new Set([1, 2, 3]);
  const line = (r: string[]) =>
    r.map((c, i) => (right.has(i) ? c.padStart(width[i] ?? 0) : c.padEnd(width[i] ?? 0))).join("  ");
  return [line(header), width.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const quick = args.includes("--quick");
  const chosen = select(args.filter((a) => a !== "--quick"));
  let kubeconfig: string | undefined;
  let startedHere = false;
  if (chosen.some((n) => BENCHMARKS[n]?.needsCluster)) {
    if (process.env.SYNCWARD_BENCH_KUBECONFIG) {
      kubeconfig = process.env.SYNCWARD_BENCH_KUBECONFIG;
      progress(`using the existing cluster in ${kubeconfig}`);
    } else {
      try {
        const { state, alreadyUp } = await up();
        startedHere = !alreadyUp;
        kubeconfig = state.kubeconfig;
        progress(`control plane ${alreadyUp ? "reused" : "started"} at ${state.server}`);
      } catch (err) {
        process.stderr.write(
          `the local control plane could not start: ${err instanceof PlaneError ? err.message : String(err)}\n`,
        );
        return 1;
      }
    }
  }
  const ctx: BenchContext = { kubeconfig: kubeconfig ?? "", quick };
  const measured: Array<
    Measurement & { group: string; machine: Machine; startedAt: string; finishedAt: string }
  > = [];
  const data: Record<string, unknown> = {};
  let failed = false;
  try {
    for (const name of chosen) {
      const startedAt = new Date().toISOString();
      const atStart = machine(kubeconfig);
      progress(`${name}: starting (load average ${atStart.loadAverage.map((l) => l.toFixed(2)).join(" ")})`);
      try {
        const result = await BENCHMARKS[name]!.run(ctx);
        const finishedAt = new Date().toISOString();
        const at = { ...atStart, loadAverageAtEnd: loadavg() };
        for (const m of result.measurements)
          measured.push({ ...m, group: name, machine: at, startedAt, finishedAt });
        if (result.data) data[name] = result.data;
      } catch (err) {
        failed = true;
        process.stderr.write(
          `[bench] ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
      }
    }
  } finally {
    if (startedHere) {
      progress("stopping the control plane this run started");
      await down();
    }
  }
  // A subset run replaces only its own benchmarks; the others keep their earlier figures.
  const file = quick ? quickFile : latestFile;
  const previous = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as {
        benchmarks?: Array<{ group: string }>;
        data?: Record<string, unknown>;
      })
    : {};
  const ran = new Set(chosen);
  const kept = (previous.benchmarks ?? []).filter((b) => !ran.has(b.group as Name));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        generatedAt: new Date().toISOString(),
        quick,
        commitAtEnd: output("git", ["rev-parse", "--short", "HEAD"]),
        benchmarks: [...kept, ...measured],
        data: { ...(previous.data ?? {}), ...data },
      },
      null,
      2,
    )}\n`,
  );
  console.log(table(measured));
  console.log(`\nresults: ${file}`);
  return failed ? 1 : 0;
}

process.exit(await main());
