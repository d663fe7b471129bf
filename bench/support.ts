// Helpers every benchmark shares: statistics, namespaces that are created fresh and removed (and
// waited for) afterwards, kubectl, and a logger that keeps progress on stderr so that stdout carries
// only the final table.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { KubeClient } from "../src/kube/client.ts";
import { KubeApiError } from "../src/kube/errors.ts";
import { sleep } from "../src/util/sleep.ts";

export interface BenchContext {
  kubeconfig: string;
  /** `--quick`: 100 objects and 10 trials instead of 1,000 and 50, for a fast check. */
  quick: boolean;
}

/**
 * One line of the table and one object of bench/results/latest.json. `syncward` and `baseline`
 * are medians in `unit`; `samples` holds every trial (the medians' source).
 */
export interface Measurement {
  name: string;
  unit: string;
  syncward: number;
  /** What the same work costs another way (kubectl, raw PATCH requests), when there is a side-by-side. */
  baseline?: { name: string; value: number };
  /** The median of the per-trial ratios; `ratioMeaning` says which way round. */
  ratio?: number;
  ratioMeaning?: string;
  /** The issue's target, in words, and whether this run met it. */
  target?: string;
  met?: boolean;
  samples: { syncward: number[]; baseline?: number[]; ratio?: number[] };
  /** Anything else measured (percentiles, request counts, phases), for the record. */
  details?: Record<string, unknown>;
}

export interface BenchResult {
  measurements: Measurement[];
  /** Everything measured, trial by trial, for bench/results/latest.json. */
  data?: Record<string, unknown>;
}

export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p99 of 50 samples is the largest of them). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** Two measurements of one latency sample: its median and its 99th percentile (nearest rank). */
export function medianAndP99(
  name: string,
  samples: number[],
  o: { median?: [string, number]; p99?: [string, number]; ok?: boolean; details?: Record<string, unknown> },
): Measurement[] {
  const m = median(samples);
  const p99 = percentile(samples, 99);
  const ok = o.ok ?? true;
  return [
    {
      name: `${name}, median`,
      unit: "ms",
      syncward: m,
      target: o.median?.[0],
      met: o.median ? ok && m < o.median[1] : undefined,
      samples: { syncward: samples },
      details: { p90Ms: percentile(samples, 90), minMs: Math.min(...samples), ...o.details },
    },
    {
      name: `${name}, p99`,
      unit: "ms",
      syncward: p99,
      target: o.p99?.[0],
      met: o.p99 ? ok && p99 < o.p99[1] : undefined,
      samples: { syncward: samples },
      details: { maxMs: Math.max(...samples) },
    },
  ];
}

export const ms = (v: number): string => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`);
export const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

/** Runs `fn` and returns its value with the wall time in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

export function client(ctx: BenchContext, options: { maxSockets?: number } = {}): KubeClient {
  return KubeClient.fromKubeconfig({ kubeconfig: ctx.kubeconfig, ...options });
}

export interface KubectlRun {
  stdout: string;
  stderr: string;
  ms: number;
  /** User + system CPU time of the kubectl process (from /usr/bin/time, when the machine has it). */
  cpuMs?: number;
  maxRssKiB?: number;
}

const TIME = "/usr/bin/time";

/** Runs kubectl against the benchmark cluster; rejects with its stderr when it fails. */
export async function kubectl(ctx: BenchContext, args: string[]): Promise<KubectlRun> {
  const usage = existsSync(TIME)
    ? join(mkdtempSync(join(tmpdir(), "syncward-bench-time-")), "usage")
    : undefined;
  const argv = ["--kubeconfig", ctx.kubeconfig, ...args];
  const [command, commandArgs] = usage
    ? [TIME, ["-o", usage, "-f", "%U %S %M", "kubectl", ...argv]]
    : ["kubectl", argv];
  const start = performance.now();
  const run = await new Promise<KubectlRun>((resolve, reject) => {
    execFile(command, commandArgs, { maxBuffer: 256 * 2 ** 20 }, (err, stdout, stderr) => {
      const elapsed = performance.now() - start;
      if (err) reject(new Error(`kubectl ${args.join(" ")} failed: ${stderr.slice(-2000) || err.message}`));
      else resolve({ stdout, stderr, ms: elapsed });
    });
  });
  if (usage) {
    const [user, system, rss] =
      readFileSync(usage, "utf8").trim().split("\n").at(-1)?.split(" ").map(Number) ?? [];
    if (user !== undefined && system !== undefined) run.cpuMs = (user + system) * 1000;
    run.maxRssKiB = rss;
    rmSync(dirname(usage), { recursive: true, force: true });
  }
  return run;
}

/** Namespaces made for one benchmark; `removeAll` deletes them and waits until they are gone. */
export class Namespaces {
  private readonly created: string[] = [];

  constructor(
    private readonly kube: KubeClient,
    private readonly prefix: string,
  ) {}

  async create(suffix = ""): Promise<string> {
    const name = `${this.prefix}-${randomBytes(3).toString("hex")}${suffix ? `-${suffix}` : ""}`;
    await this.kube.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    this.created.push(name);
    return name;
  }

  /** Deletes `names` (default: all created) and waits until the API server no longer has them. */
  async remove(names: string[] = [...this.created], timeoutMs = 300_000): Promise<void> {
    for (const name of names) {
      await this.kube.delete(
        { group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" },
        "background",
      );
    }
    const deadline = Date.now() + timeoutMs;
    let left = names;
    while (left.length > 0 && Date.now() < deadline) {
      const still: string[] = [];
      for (const name of left) {
        if (await this.kube.get("v1", "Namespace", undefined, name)) still.push(name);
      }
      left = still;
      if (left.length > 0) await sleep(500);
    }
    for (const name of names) this.created.splice(this.created.indexOf(name), 1);
    if (left.length > 0)
      progress(`namespaces still terminating after ${timeoutMs / 1000}s: ${left.join(", ")}`);
  }

  async removeAll(): Promise<void> {
    await this.remove();
  }
}

/** Waits until every Deployment in `namespace` has all its replicas ready (pods settle the server). */
export async function waitDeploymentsReady(
  kube: KubeClient,
  namespace: string,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const { items } = await kube.list("apps/v1", "Deployment", { namespace });
      const pending = items.filter((d) => {
        const spec = d.spec as { replicas?: number } | undefined;
        const status = d.status as { readyReplicas?: number; observedGeneration?: number } | undefined;
        return (
          (status?.readyReplicas ?? 0) !== (spec?.replicas ?? 1) ||
          (status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)
        );
      });
      if (pending.length === 0) return;
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
    }
    await sleep(500);
  }
  progress(`deployments in ${namespace} were not all ready after ${timeoutMs / 1000}s; going on`);
}

/** Forces a garbage collection when node runs with --expose-gc. */
export function gc(): boolean {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) return false;
  g();
  g();
  return true;
}
