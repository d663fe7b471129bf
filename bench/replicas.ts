// Issue 19, scale-out: REPLICAS `syncward controller --repos` processes (compiled JavaScript, as
// deployed, default lease and poll) over one directory of APPS git repositories, each app OBJECTS
// ConfigMaps in a namespace of its own, one state namespace: the apps are shared out through the
// Leases. Once every app is held (each replica within ceil(apps / replicas) + 1) and synced, each
// process's resident memory is read (/proc/PID/status), then again after an idle window, with the
// CPU each spent in it; the target is every replica's RSS within 20% of the others (largest over
// smallest). The apps each replica holds are read from the Leases, so an uneven RSS can be told
// apart from an uneven share. Then the takeover, TRIALS times: the replica holding the most apps is
// killed (SIGKILL) and a commit is made at once to one of its apps (a push that arrives while
// nobody holds it); timed until every app it held is held by a survivor, and until that commit is
// synced and recorded; a replacement then joins and the fleet is balanced and synced again. Target:
// each within one lease duration plus one sync (that sync's own time, from its history).
//
// Full size: 3 replicas x 60 apps x 20 ConfigMaps, idle 60 s. `--quick`: 3 x 30 x 10, idle 20 s.
// Knobs: SYNCWARD_BENCH_REPLICAS, SYNCWARD_BENCH_REPLICA_APPS, SYNCWARD_BENCH_REPLICA_OBJECTS,
// SYNCWARD_BENCH_IDLE_MS, SYNCWARD_BENCH_TAKEOVER_TRIALS (3; --quick 1).
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { checkoutApp } from "../src/cli/app-identity.ts";
import { appLeaseName } from "../src/reconciler/reconciler.ts";
import { instanceName } from "../src/state/identity.ts";
import { StateStore } from "../src/state/store.ts";
import { mapLimit } from "../src/util/map-limit.ts";
import { sleep } from "../src/util/sleep.ts";
import { ensureBuilt, ROOT } from "../test/support/built.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { imageNode, imageRuntime } from "./controller-memory.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  type Measurement,
  Namespaces,
  progress,
} from "./support.ts";

const MB = 1_000_000;
/** `syncward controller`'s default lease duration (the bench passes no --lease-duration). */
const LEASE_MS = 15_000;
/** Clock ticks per second of /proc/PID/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

interface Sample {
  rss: number;
  cpuMs: number;
}

/** Resident memory and CPU so far of a process, from /proc. */
function sample(pid: number): Sample {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(status.match(/^VmRSS:\s+(\d+)/m)?.[1] ?? Number.NaN);
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rss: rssKiB * 1024, cpuMs: (ticks * 1000) / TICKS };
}

function configMaps(app: string, count: number): string {
  const docs: string[] = [];
  for (let i = 0; i < count; i++)
    docs.push(
      stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `settings-${String(i).padStart(3, "0")}`, labels: { app } },
        data: { APP: app, INDEX: String(i), "config.yaml": `replicas: ${i % 5}\nfeature: on\n` },
      }),
    );
  return docs.join("---\n");
}

/** Largest over smallest, less one: 0.2 means the largest is 20% above the smallest. */
export function spread(values: number[]): number {
  return Math.max(...values) / Math.min(...values) - 1;
}

export async function replicas(ctx: BenchContext): Promise<BenchResult> {
  const count = Number(process.env.SYNCWARD_BENCH_REPLICAS ?? 3);
  const apps = Number(process.env.SYNCWARD_BENCH_REPLICA_APPS ?? (ctx.quick ? 30 : 60));
  const objects = Number(process.env.SYNCWARD_BENCH_REPLICA_OBJECTS ?? (ctx.quick ? 10 : 20));
  const idleMs = Number(process.env.SYNCWARD_BENCH_IDLE_MS ?? (ctx.quick ? 20_000 : 60_000));
  const trials = Number(process.env.SYNCWARD_BENCH_TAKEOVER_TRIALS ?? (ctx.quick ? 1 : 3));
  progress(
    `replicas: ${count} controllers over ${apps} apps x ${objects} ConfigMaps, idle ${idleMs / 1000}s`,
  );
  ensureBuilt();
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-rep");
  const reposDir = mkdtempSync(join(tmpdir(), "syncward-bench-replicas-"));
  const logDir = mkdtempSync(join(tmpdir(), "syncward-bench-replica-logs-"));
  const children: ChildProcess[] = [];
  try {
    const stateNs = await namespaces.create("state");
    const names = Array.from({ length: apps }, (_, i) => `app-${String(i).padStart(3, "0")}`);
    const destinations = await mapLimit(names, 8, (name) => namespaces.create(name));
    const heads = new Map<string, string>();
    const repos = new Map<string, ReturnType<typeof makeRepo>>();
    names.forEach((app, i) => {
      const repo = makeRepo(
        {
          ".github/syncward.yml": stringify({
            environments: [
              {
                name: "dev",
                source: { path: "app" },
                destination: { namespace: destinations[i] },
                syncPolicy: { automated: { prune: true, selfHeal: true } },
              },
            ],
          }),
          "app/configmaps.yaml": configMaps(app, objects),
        },
        "main",
        join(reposDir, app),
      );
      heads.set(app, repo.head());
      repos.set(app, repo);
    });

    const identities = Array.from({ length: count }, (_, i) => `replica-${i}`);
    /** The replicas running now, by identity (a killed one leaves, its replacement joins). */
    const live = new Map<string, ChildProcess>();
    // What the image runs: its Node, flags and malloc setting (as the memory benchmark runs them).
    const runtime = imageRuntime();
    const node = imageNode();
    const start = (identity: string) => {
      const child = spawn(
        node,
        [
          ...runtime.flags,
          join(ROOT, "bin", "syncward.js"),
          "controller",
          "--repos",
          reposDir,
          "--kubeconfig",
          ctx.kubeconfig,
          "--state-namespace",
          stateNs,
          "--identity",
          identity,
          "--log-level",
          process.env.SYNCWARD_BENCH_LOG ?? "warn",
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...runtime.env, NODE_OPTIONS: "" } },
      );
      child.stdout?.pipe(createWriteStream(join(logDir, `${identity}.out`)));
      child.stderr?.pipe(createWriteStream(join(logDir, `${identity}.err`)));
      children.push(child);
      live.set(identity, child);
    };
    const started = performance.now();
    for (const identity of identities) start(identity);

    // What the controllers name each app by: its checkout's identity (a hash of its path here).
    const idOf = new Map(names.map((app) => [app, checkoutApp(join(reposDir, app)).id]));
    const instanceOf = (app: string) => instanceName(idOf.get(app) ?? app, "dev");
    const appOfInstance = new Map(names.map((app) => [instanceOf(app), app]));
    const appOfLease = new Map(names.map((app) => [appLeaseName(idOf.get(app) ?? app), app]));
    /** The apps each running replica holds, from the app Leases. */
    const holders = async () => {
      const { items } = await admin.list("coordination.k8s.io/v1", "Lease", { namespace: stateNs });
      const held = new Map<string, string[]>([...live.keys()].map((id) => [id, []]));
      for (const lease of items as unknown as Array<{
        metadata: { name: string };
        spec?: { holderIdentity?: string };
      }>) {
        const app = appOfLease.get(lease.metadata.name);
        const holder = lease.spec?.holderIdentity;
        if (app && holder) held.get(holder)?.push(app);
      }
      return held;
    };
    const store = new StateStore(admin, stateNs);
    const bound = Math.ceil(apps / count) + 1;
    /** Until every app is held by a running replica, each within the bound, and synced at its head. */
    const balancedAndSynced = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if ([...live.values()].some((c) => c.exitCode !== null || c.signalCode !== null))
          throw new Error(`a replica exited; logs in ${logDir}`);
        const held = await holders();
        const total = [...held.values()].reduce((n, a) => n + a.length, 0);
        const balanced = total === apps && [...held.values()].every((a) => a.length <= bound);
        if (balanced) {
          const states = await store.list();
          const synced = states.filter(
            (s) => s.lastSyncedRevision === heads.get(appOfInstance.get(s.environment) ?? ""),
          ).length;
          if (synced === apps) return true;
          progress(`replicas: balanced, ${synced}/${apps} synced`);
        } else
          progress(
            `replicas: ${total}/${apps} apps held (${[...held.values()].map((a) => a.length).join(" / ")})`,
          );
        await sleep(2000);
      }
      return false;
    };
    const ready = await balancedAndSynced(900_000);
    let held = await holders();
    /**
     * Kills the replica holding the most apps (SIGKILL), commits to one of its apps at once, and
     * times the survivors' takeover of all its apps and the sync of that commit. Then a replacement
     * joins and the fleet is balanced and synced again before the next trial.
     */
    const killOne = async (trial: number) => {
      const before = await holders();
      const [victim, victimApps] = [...before].reduce((x, y) => (y[1].length > x[1].length ? y : x));
      const pushedApp = victimApps[0] as string;
      const t0 = performance.now();
      live.get(victim)?.kill("SIGKILL");
      live.delete(victim);
      const pushed = (repos.get(pushedApp) as ReturnType<typeof makeRepo>).commit({
        "app/configmaps.yaml": configMaps(`${pushedApp}-v${trial + 2}`, objects),
      });
      heads.set(pushedApp, pushed);
      let takenMs: number | undefined;
      let syncedMs: number | undefined;
      let syncMs: number | undefined;
      const limit = Date.now() + 180_000;
      while (Date.now() < limit && (takenMs === undefined || syncedMs === undefined)) {
        if (takenMs === undefined) {
          const now = await holders();
          if (victimApps.every((app) => [...now.values()].some((a) => a.includes(app))))
            takenMs = performance.now() - t0;
        }
        if (syncedMs === undefined) {
          const state = await store.load(instanceOf(pushedApp));
          if (state.lastSyncedRevision === pushed) {
            syncedMs = performance.now() - t0;
            const entry = state.history.find((h) => h.revision === pushed && h.result === "Succeeded");
            if (entry) syncMs = Date.parse(entry.finishedAt) - Date.parse(entry.startedAt);
          }
        }
        await sleep(100);
      }
      const result = {
        victim,
        apps: victimApps.length,
        pushedApp,
        leaseMs: LEASE_MS,
        takenMs: takenMs === undefined ? undefined : Math.round(takenMs),
        syncedMs: syncedMs === undefined ? undefined : Math.round(syncedMs),
        syncMs,
      };
      progress(`replicas: takeover ${trial + 1}: ${JSON.stringify(result)}`);
      start(`replica-${count + trial}`);
      if (!(await balancedAndSynced(180_000)))
        progress("replicas: NOT balanced again after the replacement joined");
      return result;
    };
    const readyMs = performance.now() - started;
    progress(
      `replicas: ${ready ? "synced and balanced" : "NOT synced and balanced"} after ${(readyMs / 1000).toFixed(1)}s; settling 10s, then idling ${idleMs / 1000}s`,
    );
    // The passes the first syncs' own watch events cause are over before anything is read.
    await sleep(10_000);
    const pids = children.map((c) => c.pid as number);
    const synced = pids.map(sample);
    await sleep(idleMs);
    const idle = pids.map(sample);
    held = await holders();
    const per = identities.map((id, i) => ({
      identity: id,
      apps: held.get(id)?.length ?? 0,
      rssSyncedMB: Math.round((synced[i] as Sample).rss / MB),
      rssIdleMB: Math.round((idle[i] as Sample).rss / MB),
      idleCpuMsPerMinute: Math.round(
        (((idle[i] as Sample).cpuMs - (synced[i] as Sample).cpuMs) * 60_000) / idleMs,
      ),
    }));
    progress(`replicas: ${JSON.stringify(per)}`);
    const takeovers: Array<Awaited<ReturnType<typeof killOne>>> = [];
    if (ready) for (let t = 0; t < trials; t++) takeovers.push(await killOne(t));
    const rssSynced = per.map((p) => p.rssSyncedMB);
    const rssIdle = per.map((p) => p.rssIdleMB);
    const label = `${count} replicas, ${apps} apps x ${objects} objects`;
    const measurements: Measurement[] = [
      {
        name: `RSS spread of ${label}, after the initial syncs (largest / smallest - 1)`,
        unit: "%",
        syncward: Math.round(spread(rssSynced) * 100),
        target: "within 20% of each other",
        met: ready && spread(rssSynced) <= 0.2,
        samples: { syncward: rssSynced },
        details: { perReplica: per, readyMs: Math.round(readyMs), ready },
      },
      {
        name: `RSS spread of ${label}, after ${idleMs / 1000}s idle (largest / smallest - 1)`,
        unit: "%",
        syncward: Math.round(spread(rssIdle) * 100),
        target: "within 20% of each other",
        met: ready && spread(rssIdle) <= 0.2,
        samples: { syncward: rssIdle },
        details: { perReplica: per },
      },
    ];
    if (takeovers.length > 0) {
      const within = (t: (typeof takeovers)[number]) =>
        t.syncedMs !== undefined && t.takenMs !== undefined && t.syncedMs < t.leaseMs + (t.syncMs ?? 0);
      const synced = takeovers.map((t) => t.syncedMs ?? Number.NaN);
      measurements.push({
        name: `takeover of a killed replica's apps (${trials} kills), ${label}: a commit made at the kill synced, worst`,
        unit: "ms",
        syncward: Math.max(...synced),
        target: `< one lease duration (${LEASE_MS / 1000} s) + one sync, each trial`,
        met: takeovers.every(within),
        samples: { syncward: synced },
        details: { takeovers, takenMs: takeovers.map((t) => t.takenMs) },
      });
    }
    return {
      measurements,
      data: { replicas: count, apps, objects, idleMs, readyMs, ready, perReplica: per, takeovers },
    };
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await Promise.race([
      Promise.all(
        children.map((c) =>
          c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once("exit", r)),
        ),
      ),
      sleep(30_000),
    ]);
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    progress(`replicas: removing namespaces (replica logs kept in ${logDir})`);
    await namespaces.removeAll();
    admin.close();
    rmSync(reposDir, { recursive: true, force: true });
  }
}
