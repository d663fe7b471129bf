// Opt-in benchmark `previews`: preview environments of pull requests on the real plane, with the
// app and a mocked GitHub in this process (watches on, the sweep at its production interval, and
// every environment's poll at its own pollInterval, 3m by default, as in production). The
// app deploys 50 ConfigMaps; each pull request adds one of its own. Measured: from the labelled
// webhook to the preview's successful deployment status (its sync done), over N pull requests one
// after another; from the close webhook to the namespace gone, over N; and the idle cost of 20
// live previews against none, over a window each: API server requests per second (the apiserver's
// own apiserver_request_total, every client; and syncward's client's count), GitHub requests per
// second (what polling would cost) and this process's RSS.
import { randomBytes } from "node:crypto";
import { stringify } from "yaml";
import { sleep } from "../src/util/sleep.ts";
import type { TestCluster } from "../test/support/cluster.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { closePull, type PreviewApp, type Pull, startPreviewApp } from "../test/support/preview-app.ts";
import { pullRequestEvent } from "../test/support/webhooks.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  kubectl,
  medianAndP99,
  mib,
  Namespaces,
  progress,
} from "./support.ts";

const OBJECTS = 50;
const LIVE = 20;

const configMap = (name: string) =>
  stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "1" } });

/** The API server's request count since it started (every client), from its /metrics. */
async function apiserverRequests(ctx: BenchContext): Promise<number> {
  const { stdout } = await kubectl(ctx, ["get", "--raw", "/metrics"]);
  let total = 0;
  for (const line of stdout.split("\n"))
    if (line.startsWith("apiserver_request_total{")) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  return total;
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

export async function previews(ctx: BenchContext): Promise<BenchResult> {
  const trials = Number(process.env.SYNCWARD_BENCH_PREVIEW_TRIALS ?? (ctx.quick ? 5 : 10));
  // A full window outlasts the default poll interval (3m, up to 20% jitter): every environment,
  // and any preview that polled, would poll in it at least once.
  const windowMs = Number(process.env.SYNCWARD_BENCH_PREVIEW_IDLE_MS ?? (ctx.quick ? 15_000 : 240_000));
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-pv");
  const prefix = `bpv${randomBytes(3).toString("hex")}`;
  const files: Record<string, string> = {};
  for (let i = 0; i < OBJECTS; i++) files[`app/cm-${i}.yaml`] = configMap(`cm-${i}`);
  const repo = makeRepo(files);
  const pulls = new Map<number, Pull>();
  const syncward = client(ctx);
  let app: PreviewApp | undefined;
  const started: number[] = [];
  const removed: number[] = [];
  const idle: Record<
    string,
    {
      apiserverPerSecond: number;
      syncwardPerSecond: number;
      githubPerSecond: number;
      /** What GitHub was asked in the window (method and path, query left out). */
      githubRequests: string[];
      rssMiB: number;
    }
  > = {};
  const url = (n: number) => `https://pr-${n}.preview.example`;
  const succeeded = (a: PreviewApp, n: number) =>
    a
      .sent("POST", /\/deployments\/\d+\/statuses$/)
      .some((b) => b.state === "success" && b.environment_url === url(n));
  const window = async (name: string) => {
    global.gc?.();
    const before = await apiserverRequests(ctx);
    const own = syncward.counts.requests;
    const github = app?.mock.requests.length ?? 0;
    const at = Date.now();
    await sleep(windowMs);
    const seconds = (Date.now() - at) / 1000;
    const after = await apiserverRequests(ctx);
    idle[name] = {
      // The scrapes themselves are two of them.
      apiserverPerSecond: (after - before - 2) / seconds,
      syncwardPerSecond: (syncward.counts.requests - own) / seconds,
      githubPerSecond: ((app?.mock.requests.length ?? 0) - github) / seconds,
      githubRequests: (app?.mock.requests.slice(github) ?? []).map(
        (r) => `${r.method} ${new URL(r.url.split(" ")[0] ?? "", "https://api.github.com").pathname}`,
      ),
      rssMiB: mib(process.memoryUsage().rss),
    };
    progress(`previews: idle with ${name}: ${JSON.stringify(idle[name])}`);
  };
  try {
    const stateNamespace = await namespaces.create("state");
    app = await startPreviewApp({
      cluster: { client: admin } as unknown as TestCluster,
      client: syncward,
      repo,
      pulls,
      prefix,
      stateNamespace,
      watch: true,
      sweepMs: 300_000,
      // Polling as in production: the idle cost of previews is measured against real polls.
      pollIntervalMs: "config",
      limits: { maxPerRepository: LIVE + trials, maxPerInstallation: LIVE + trials },
    });
    const a = app;
    await window("no previews");
    const label = async (n: number) => {
      repo.git("checkout", "-q", "-b", `feature-${n}`, "main");
      const head = repo.commit({ [`app/pr-${n}.yaml`]: configMap(`pr-${n}`) }, `pr ${n}`);
      repo.git("checkout", "-q", "main");
      pulls.set(n, { state: "open", head, branch: `feature-${n}` });
      await a.probot.receive(
        pullRequestEvent("labeled", {
          number: n,
          headSha: head,
          headRef: `feature-${n}`,
          labels: ["preview"],
        }),
      );
    };
    for (let n = 1; n <= LIVE; n++) {
      const at = Date.now();
      await label(n);
      await until(`preview ${n} synced`, () => succeeded(a, n));
      if (n <= trials) {
        started.push(Date.now() - at);
        progress(`previews: #${n} labelled -> synced in ${started.at(-1)} ms`);
      }
    }
    await a.parts.previews.idle();
    await window(`${LIVE} live previews`);
    for (let n = 1; n <= LIVE; n++) {
      const at = Date.now();
      await closePull(a, pulls, n);
      const ns = `${prefix}-pr-${n}`;
      if (n > trials) continue; // the rest go at once, unmeasured
      await until(
        `namespace ${ns} gone`,
        async () => !(await admin.get("v1", "Namespace", undefined, ns)),
        300_000,
      );
      removed.push(Date.now() - at);
      progress(`previews: #${n} closed -> namespace gone in ${removed.at(-1)} ms`);
    }
    await until(
      "every preview namespace gone",
      async () =>
        (await admin.list("v1", "Namespace")).items.every(
          (n) => !n.metadata.name?.startsWith(`${prefix}-pr-`),
        ),
      300_000,
    );
  } finally {
    await app?.close();
    await namespaces.removeAll();
    admin.close();
    syncward.close();
  }
  const none = idle["no previews"];
  const some = idle[`${LIVE} live previews`];
  return {
    measurements: [
      ...medianAndP99("previews: PR labelled -> preview synced (50 objects)", started, {
        details: { trials, objects: OBJECTS },
      }),
      ...medianAndP99("previews: PR closed -> namespace gone", removed, { details: { trials } }),
      {
        name: `previews: idle API server requests/s, ${LIVE} live previews (vs none)`,
        unit: "req/s",
        syncward: some?.apiserverPerSecond ?? Number.NaN,
        baseline: { name: "no previews", value: none?.apiserverPerSecond ?? Number.NaN },
        samples: {
          syncward: [some?.apiserverPerSecond ?? Number.NaN],
          baseline: [none?.apiserverPerSecond ?? Number.NaN],
        },
        details: {
          windowMs,
          syncwardClient: { live: some?.syncwardPerSecond, none: none?.syncwardPerSecond },
        },
      },
      {
        name: `previews: idle GitHub requests/s, ${LIVE} live previews (vs none)`,
        unit: "req/s",
        syncward: some?.githubPerSecond ?? Number.NaN,
        baseline: { name: "no previews", value: none?.githubPerSecond ?? Number.NaN },
        samples: {
          syncward: [some?.githubPerSecond ?? Number.NaN],
          baseline: [none?.githubPerSecond ?? Number.NaN],
        },
        details: {
          windowMs,
          pollInterval: "each environment's (3m by default)",
          sweepMs: 300_000,
          requests: { live: some?.githubRequests, none: none?.githubRequests },
        },
      },
      {
        name: `previews: syncward RSS, ${LIVE} live previews (vs none)`,
        unit: "MiB",
        syncward: some?.rssMiB ?? Number.NaN,
        baseline: { name: "no previews", value: none?.rssMiB ?? Number.NaN },
        samples: { syncward: [some?.rssMiB ?? Number.NaN], baseline: [none?.rssMiB ?? Number.NaN] },
      },
    ],
    data: { labelledToSyncedMs: started, closedToGoneMs: removed, idle },
  };
}
