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

/** API requests of each push after the first, for an app with `environments` environments. */
async function measure(
  ctx: BenchContext,
  pushes: number,
  environments: number,
): Promise<{ counts: number[]; byEndpoint: Record<string, number>; first: string[]; failed: number }> {
  const app = await startBenchApp(ctx, environments);
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
  return { counts, byEndpoint, first, failed };
}

export async function githubRequests(ctx: BenchContext): Promise<BenchResult> {
  const pushes = Number(process.env.SYNCWARD_BENCH_GITHUB_PUSHES ?? (ctx.quick ? 3 : 5));
  const one = await measure(ctx, pushes, 1);
  progress(`github: ${median(one.counts)} API requests per push (${JSON.stringify(one.byEndpoint)})`);
  // A second environment at the same revision shares the tarball: it adds its own reports only.
  const two = await measure(ctx, pushes, 2);
  const further = two.counts.map((c, i) => c - (one.counts[i] ?? median(one.counts)));
  progress(
    `github: ${median(two.counts)} API requests per push with two environments (${JSON.stringify(two.byEndpoint)})`,
  );
  return {
    measurements: [
      {
        name: "GitHub API requests per push, one environment, automated sync succeeds",
        unit: "requests",
        syncward: median(one.counts),
        target: "<= 6",
        met: Math.max(...one.counts) <= 6 && one.failed === 0,
        samples: { syncward: one.counts },
        details: { perPushByEndpoint: one.byEndpoint, firstPush: one.first, failedPushes: one.failed },
      },
      {
        name: "GitHub API requests per push for each further environment at the same revision",
        unit: "requests",
        syncward: median(further),
        target: "<= 5",
        met: Math.max(...further) <= 5 && two.failed === 0,
        samples: { syncward: further },
        details: {
          twoEnvironments: two.counts,
          perPushByEndpoint: two.byEndpoint,
          firstPush: two.first,
          failedPushes: two.failed,
        },
      },
    ],
  };
}
