// `npm run bench [-- engine selfheal memory plane build]`: runs the chosen benchmarks (all but the
// opt-in `build` by default), prints a table and writes bench/results.json. The cluster is the
// local control plane (started here when it is not up, and then stopped again) or the one named by
// SYNCWARD_BENCH_KUBECONFIG. Each benchmark makes namespaces of its own and removes them.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { down, PlaneError, up } from "../tools/cluster/plane.ts";
import { controllerMemory } from "./controller-memory.ts";
import { engineVsKubectl } from "./engine-vs-kubectl.ts";
import { coldBuildBench, planeBench } from "./plane.ts";
import { selfHealLatency } from "./selfheal-latency.ts";
import { type BenchContext, type BenchResult, progress, type Row } from "./support.ts";

const BENCHMARKS = {
  engine: { needsCluster: true, run: (ctx: BenchContext) => engineVsKubectl(ctx) },
  selfheal: { needsCluster: true, run: (ctx: BenchContext) => selfHealLatency(ctx) },
  memory: { needsCluster: true, run: (ctx: BenchContext) => controllerMemory(ctx) },
  plane: { needsCluster: false, run: () => planeBench() },
  build: { needsCluster: false, run: () => coldBuildBench() },
} as const;
type Name = keyof typeof BENCHMARKS;
const DEFAULT: Name[] = ["engine", "selfheal", "memory", "plane"];

const resultsFile = join(import.meta.dirname, "results.json");

function select(args: string[]): Name[] {
  const unknown = args.filter((a) => !(a in BENCHMARKS));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(", ")}\nusage: npm run bench [-- ${Object.keys(BENCHMARKS).join(" ")}]\n`,
    );
    process.exit(2);
  }
  return args.length > 0 ? (args as Name[]) : DEFAULT;
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

function machine(kubeconfig: string | undefined) {
  const cpu = cpus();
  return {
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
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

function table(rows: Row[]): string {
  const header: Row = {
    benchmark: "benchmark",
    metric: "metric",
    value: "syncward",
    kubectl: "kubectl",
    ratio: "kubectl/syncward",
  };
  const all = [header, ...rows];
  const cols: Array<keyof Row> = ["benchmark", "metric", "value", "kubectl", "ratio"];
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(...all.map((r) => (r[c] ?? "").length))]));
  const line = (r: Row) =>
    cols
      .map((c) =>
        c === "value" || c === "kubectl" || c === "ratio"
          ? (r[c] ?? "").padStart(width[c] ?? 0)
          : (r[c] ?? "").padEnd(width[c] ?? 0),
      )
      .join("  ");
  let previous = "";
  const lines = [line(header), cols.map((c) => "-".repeat(width[c] ?? 0)).join("  ")];
  for (const r of rows) {
    lines.push(line({ ...r, benchmark: r.benchmark === previous ? "" : r.benchmark }));
    previous = r.benchmark;
  }
  return lines.join("\n");
}

async function main(): Promise<number> {
  const chosen = select(process.argv.slice(2));
  let kubeconfig: string | undefined;
  let startedHere = false;
  if (chosen.some((n) => BENCHMARKS[n].needsCluster)) {
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
  const atStart = machine(kubeconfig);
  const results: Record<
    string,
    BenchResult & { startedAt: string; finishedAt: string; machine: ReturnType<typeof machine> }
  > = {};
  let failed = false;
  try {
    for (const name of chosen) {
      const startedAt = new Date().toISOString();
      try {
        const result = await BENCHMARKS[name].run({ kubeconfig: kubeconfig ?? "" });
        results[name] = {
          ...result,
          startedAt,
          finishedAt: new Date().toISOString(),
          machine: atStart,
        };
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
  // Keep earlier results of benchmarks not run this time, so a partial run updates the file.
  const previous = existsSync(resultsFile)
    ? (JSON.parse(readFileSync(resultsFile, "utf8")) as { benchmarks?: Record<string, unknown> })
    : {};
  const file = {
    /** The machine of the latest run; each benchmark carries the machine (and commit) it ran on. */
    machine: atStart,
    commitAtEnd: output("git", ["rev-parse", "--short", "HEAD"]),
    generatedAt: new Date().toISOString(),
    benchmarks: { ...(previous.benchmarks ?? {}), ...results },
  };
  writeFileSync(resultsFile, `${JSON.stringify(file, null, 2)}\n`);
  console.log(table(Object.values(results).flatMap((r) => r.rows)));
  console.log(`\nresults: ${resultsFile}`);
  return failed ? 1 : 0;
}

process.exit(await main());
