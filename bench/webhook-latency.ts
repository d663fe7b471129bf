// Benchmark 4: from a signed push webhook arriving at the app's HTTP endpoint to the sync starting
// (the reconciler's syncStarted event: the tree fetched, rendered, the live objects read and the
// plan made, just before the first write). The first push is a warm-up and not counted: it creates
// the repository's runtime (reads its config) and loads the OpenAPI description the GitHub mock
// validates against.
import { startBenchApp } from "./github-app.ts";
import {
  type BenchContext,
  type BenchResult,
  median,
  medianAndP99,
  percentile,
  progress,
} from "./support.ts";

export async function webhookLatency(ctx: BenchContext): Promise<BenchResult> {
  const trials = Number(process.env.SYNCWARD_BENCH_WEBHOOK_TRIALS ?? (ctx.quick ? 10 : 50));
  const app = await startBenchApp(ctx);
  const latency: number[] = [];
  const response: number[] = [];
  let warmUpMs: number;
  let failed = 0;
  try {
    warmUpMs = (await app.push(0)).syncStartMs;
    for (let i = 1; i <= trials; i++) {
      const run = await app.push(i);
      if (run.status !== 200 || run.phase !== "Succeeded") failed++;
      latency.push(run.syncStartMs);
      response.push(run.responseMs);
    }
  } finally {
    await app.close();
  }
  progress(`webhook: median ${median(latency).toFixed(0)} ms, p99 ${percentile(latency, 99).toFixed(0)} ms`);
  return {
    measurements: medianAndP99(`webhook -> sync start, ${trials} pushes through the Probot app`, latency, {
      median: ["< 200 ms", 200],
      ok: failed === 0,
      details: { httpResponseMedianMs: median(response), warmUpPushMs: warmUpMs, failedPushes: failed },
    }),
  };
}
