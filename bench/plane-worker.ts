// The process measured by benchmark 4 (spawned by plane.ts with SYNCWARD_CLUSTER_DIR set to a
// temporary directory, so the shared plane in .cluster/ is never touched). Starts and stops a
// plane TRIALS times with the binaries already cached, and samples its resident memory once idle.
// Progress goes to stderr; the result is the last line of stdout, as JSON.
import { performance } from "node:perf_hooks";
import { sleep } from "../src/util/sleep.ts";
import { COMPONENTS, down, ensureBinaries, planeDir, rssBytes, up } from "../tools/cluster/plane.ts";

export interface PlaneTrial {
  upMs: number;
  downMs: number;
  rss: Record<string, number>;
  rssTotal: number;
}

export interface PlaneWorkerOutput {
  dir: string;
  binariesCheckMs: number;
  versions: string;
  idleSettleMs: number;
  trials: PlaneTrial[];
}

const trials = Number(process.argv[2] ?? 3);
const settleMs = Number(process.argv[3] ?? 30_000);

async function main(): Promise<PlaneWorkerOutput> {
  if (!process.env.SYNCWARD_CLUSTER_DIR)
    throw new Error("plane-worker needs SYNCWARD_CLUSTER_DIR (a scratch directory)");
  const checkStart = performance.now();
  ensureBinaries();
  const binariesCheckMs = performance.now() - checkStart;
  const out: PlaneTrial[] = [];
  let versions = "";
  for (let i = 0; i < trials; i++) {
    const start = performance.now();
    const { state, alreadyUp } = await up();
    const upMs = performance.now() - start;
    if (alreadyUp) throw new Error(`a plane was already up in ${planeDir()}`);
    versions = state.versions;
    try {
      process.stderr.write(
        `[bench] plane trial ${i + 1}: up in ${(upMs / 1000).toFixed(1)}s; idling ${settleMs / 1000}s\n`,
      );
      await sleep(settleMs);
      const rss = rssBytes(state);
      const rssTotal = COMPONENTS.reduce((sum, c) => sum + rss[c], 0);
      const downStart = performance.now();
      await down();
      out.push({ upMs, downMs: performance.now() - downStart, rss, rssTotal });
    } catch (err) {
      await down();
      throw err;
    }
  }
  return { dir: planeDir(), binariesCheckMs, versions, idleSettleMs: settleMs, trials: out };
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void down().finally(() => process.exit(130));
  });
}

main().then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    process.exit(0);
  },
  async (err: unknown) => {
    await down().catch(() => undefined);
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
