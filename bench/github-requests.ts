// Benchmark 7: GitHub API requests per push for one environment whose automated sync succeeds,
// counted on the mocked GitHub from the delivery until the app is idle again. The first push also
// reads the repository's config (once per runtime) and is reported apart.
import { startBenchApp } from "./github-app.ts";
import { type BenchContext, type BenchResult, median, progress } from "./support.ts";

const API = "https://api.github.com";

/** `POST /repos/acme/shop/deployments/1001/statuses` -> `POST /repos/{owner}/{repo}/deployments/{id}/statuses`. */
function endpoint(method: string, url: string): string {
  const path = url.replace(/^https:\/\/[^/]+/, "").replace(/\?.*$/, "");
  return `${method} ${path
    .replace(/^\/repos\/acme\/shop/, "/repos/{owner}/{repo}")
    .replace(/\/[0-9a-f]{40}$/, "/{sha}")
    .replace(/\/\d+(?=\/|$)/g, "/{id}")}`;
}

export async function githubRequests(ctx: BenchContext): Promise<BenchResult> {
  const pushes = Number(process.env.SYNCWARD_BENCH_GITHUB_PUSHES ?? (ctx.quick ? 3 : 5));
  const app = await startBenchApp(ctx);
  const counts: number[] = [];
  const byEndpoint: Record<string, number> = {};
  let first: string[] = [];
  let failed = 0;
  try {
    first = (await app.push(0)).requests.map((r) => endpoint(r.method, r.url));
    for (let i = 1; i <= pushes; i++) {
      const run = await app.push(i);
      if (run.phase !== "Succeeded") failed++;
      const api = run.requests.filter((r) => r.url.startsWith(API));
      counts.push(api.length);
      for (const r of run.requests) {
        const e = `${r.url.startsWith(API) ? "" : "(not API) "}${endpoint(r.method, r.url)}`;
        byEndpoint[e] = (byEndpoint[e] ?? 0) + 1;
      }
    }
  } finally {
    await app.close();
  }
  for (const e of Object.keys(byEndpoint)) byEndpoint[e] = (byEndpoint[e] ?? 0) / pushes;
  progress(`github: ${median(counts)} API requests per push (${JSON.stringify(byEndpoint)})`);
  return {
    measurements: [
      {
        name: "GitHub API requests per push, one environment, automated sync succeeds",
        unit: "requests",
        syncward: median(counts),
        target: "<= 6",
        met: Math.max(...counts) <= 6 && failed === 0,
        samples: { syncward: counts },
        details: { perPushByEndpoint: byEndpoint, firstPush: first, failedPushes: failed },
      },
    ],
  };
}
