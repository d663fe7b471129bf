// The cost of custom Lua health checks (resourceCustomizations), two ways:
// - `health`: assessing 10,000 live objects (the cold-sync benchmark's apps as the API server
//   returns them, and as many cert-manager-style Certificates) with the built-in rules and with
//   Lua checks, timed with process.cpuUsage; the Lua side includes copying each object into Lua.
//   The Lua config is the worst case: a `*` wildcard sends every object of every kind through a
//   script, besides a Deployment script and a Certificate script.
// - `health-resync`: a no-op resync of 1,000 objects on the cluster with and without that Lua
//   config, alternating, each side with a warm client (a running controller's view).
import { readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import type { ResourceCustomizations } from "../src/config/types.ts";
import { assessHealth, compileHealthChecks, type HealthChecks } from "../src/engine/health/index.ts";
import type { KindRef } from "../src/engine/live.ts";
import { type SyncTarget, syncEnvironment } from "../src/engine/sync.ts";
import { withTracking } from "../src/engine/tracking.ts";
import type { KubeObject } from "../src/kube/object.ts";
import { render } from "../src/source/render.ts";
import { asLive } from "./live-objects.ts";
import { KINDS_PER_APP, writeManifests } from "./manifests.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  median,
  Namespaces,
  progress,
  waitDeploymentsReady,
} from "./support.ts";

const DEPLOYMENT_LUA = `local hs = {}
if obj.spec.paused then return { status = "Suspended", message = "paused" } end
local st = obj.status or {}
if (st.observedGeneration or 0) < (obj.metadata.generation or 0) then
  return { status = "Progressing", message = "waiting for the spec to be observed" }
end
if (st.updatedReplicas or 0) < (obj.spec.replicas or 1) then
  hs.status = "Progressing"
  hs.message = (st.updatedReplicas or 0) .. " of " .. obj.spec.replicas .. " updated"
  return hs
end
hs.status = "Healthy"
hs.message = st.availableReplicas .. " available"
return hs
`;

/** The Certificate-like check of the Lua unit tests. */
const CERTIFICATE_LUA = readFileSync(
  join(import.meta.dirname, "..", "test", "fixtures", "health", "lua", "certificate.lua"),
  "utf8",
);

/** Every other kind: the Ready condition if there is one, else Healthy. */
const WILDCARD_LUA = `if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      return { status = c.status == "True" and "Healthy" or "Progressing", message = c.message }
    end
  end
end
return { status = "Healthy" }
`;

/** Scripts for the kinds that have them, without the wildcard: what a config usually holds. */
const TYPICAL_CUSTOMIZATIONS: ResourceCustomizations = {
  "apps/Deployment": { "health.lua": DEPLOYMENT_LUA },
  "cert-manager.io/Certificate": { "health.lua": CERTIFICATE_LUA },
};

export const BENCH_CUSTOMIZATIONS: ResourceCustomizations = {
  "apps/Deployment": { "health.lua": DEPLOYMENT_LUA },
  "cert-manager.io/Certificate": { "health.lua": CERTIFICATE_LUA },
  "*": { "health.lua": WILDCARD_LUA },
};

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

function certificate(i: number): KubeObject {
  const ready = i % 10 !== 3;
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: {
      name: `tls-${i}`,
      namespace: "bench-health",
      uid: `00000000-0000-4000-9000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(200_000 + i),
      generation: 1,
    },
    spec: {
      secretName: `tls-${i}`,
      dnsNames: [`app-${i}.example.com`],
      issuerRef: { kind: "ClusterIssuer", name: "letsencrypt" },
    },
    status: {
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "Ready" : "DoesNotExist",
          message: ready
            ? "Certificate is up to date and has not expired"
            : "Issuing certificate as Secret does not exist",
          observedGeneration: 1,
          lastTransitionTime: "2026-11-29T20:00:00Z",
        },
        ...(ready
          ? []
          : [
              {
                type: "Issuing",
                status: "True",
                reason: "DoesNotExist",
                message: "Issuing certificate as Secret does not exist",
              },
            ]),
      ],
      notAfter: "2027-02-27T20:00:00Z",
      revision: 1,
    },
  } as KubeObject;
}

async function renderedApps(apps: number, namespace: string): Promise<KubeObject[]> {
  const dir = writeManifests(apps);
  try {
    return (await render(dir, ".", { limits: { maxObjects: apps * KINDS_PER_APP } })).objects.map((o) => ({
      ...o,
      metadata: { ...o.metadata, namespace },
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function timeAssess(objects: KubeObject[], checks: HealthChecks | undefined, trials: number) {
  const cpu: number[] = [];
  let statuses: Record<string, number> = {};
  for (let t = 0; t < trials; t++) {
    const since = process.cpuUsage();
    const counts: Record<string, number> = {};
    for (const obj of objects) {
      const status = assessHealth(obj, checks)?.status ?? "none";
      counts[status] = (counts[status] ?? 0) + 1;
    }
    cpu.push(cpuMs(since));
    statuses = counts;
  }
  return { cpu, statuses };
}

export async function healthLuaCpu(ctx: BenchContext): Promise<BenchResult> {
  const count = Number(process.env.SYNCWARD_BENCH_HEALTH_OBJECTS ?? (ctx.quick ? 2_000 : 10_000));
  const trials = Number(process.env.SYNCWARD_BENCH_HEALTH_TRIALS ?? (ctx.quick ? 5 : 7));
  const half = Math.floor(count / 2);
  const apps = (await renderedApps(Math.ceil(half / KINDS_PER_APP), "bench-health"))
    .slice(0, half)
    .map((o, i) => asLive(withTracking(o, "bench.health"), i));
  const certificates = Array.from({ length: count - half }, (_, i) => certificate(i));
  const objects = [...apps, ...certificates];

  const compileStart = process.cpuUsage();
  const checks = compileHealthChecks(BENCH_CUSTOMIZATIONS);
  const compileCpuMs = cpuMs(compileStart);
  progress(
    `health: ${objects.length} objects (${apps.length} app objects, ${certificates.length} Certificates), ${trials} trials`,
  );

  // One untimed pass each: JIT warm-up, and the script lookup per kind.
  timeAssess(objects, undefined, 1);
  timeAssess(objects, checks, 1);
  const builtIn = timeAssess(objects, undefined, trials);
  const lua = timeAssess(objects, checks, trials);
  const perObjectUs = (ms: number) => (ms * 1000) / objects.length;
  const ratios = lua.cpu.map((v, i) => v / (builtIn.cpu[i] ?? v));
  return {
    measurements: [
      {
        name: `health of ${objects.length.toLocaleString("en")} objects, every one through a Lua check (CPU time)`,
        unit: "ms",
        syncward: median(lua.cpu),
        baseline: { name: "built-in rules", value: median(builtIn.cpu) },
        ratio: median(ratios),
        ratioMeaning: "Lua CPU / built-in CPU",
        samples: { syncward: lua.cpu, baseline: builtIn.cpu, ratio: ratios },
        details: {
          perObjectUs: { lua: perObjectUs(median(lua.cpu)), builtIn: perObjectUs(median(builtIn.cpu)) },
          compileCpuMs,
          scripts: checks.size,
          statuses: { lua: lua.statuses, builtIn: builtIn.statuses },
          loadAverage: loadavg(),
        },
      },
    ],
  };
}

const REVISION = "c".repeat(40);

/** No-op resyncs of the same namespace, alternating without and with the Lua checks. */
export async function healthLuaResync(ctx: BenchContext): Promise<BenchResult> {
  const apps = Number(process.env.SYNCWARD_BENCH_HEALTH_APPS ?? (ctx.quick ? 20 : 200));
  const trials = Number(process.env.SYNCWARD_BENCH_HEALTH_RESYNC_TRIALS ?? (ctx.quick ? 3 : 7));
  const admin = client(ctx);
  const kube = client(ctx);
  const namespaces = new Namespaces(admin, "bench-health");
  try {
    const ns = await namespaces.create();
    const objects = await renderedApps(apps, ns);
    const env = parseConfig(
      stringify({ environments: [{ name: "bench", source: { path: "." }, destination: { namespace: ns } }] }),
    ).environments[0];
    if (!env) throw new Error("parseConfig returned no environment");
    const plain: SyncTarget = { instance: `bench.${ns}`, env };
    const sides = {
      none: plain,
      // The usual config: scripts for a few kinds (here the 200 Deployments of 1,000 objects).
      typical: { ...plain, health: compileHealthChecks(TYPICAL_CUSTOMIZATIONS) },
      every: { ...plain, health: compileHealthChecks(BENCH_CUSTOMIZATIONS) },
    };
    type Side = keyof typeof sides;
    let inventory: KindRef[] | undefined;
    const run = async (target: SyncTarget) => {
      const cpu = process.cpuUsage();
      const start = performance.now();
      const result = await syncEnvironment(kube, target, {
        revision: REVISION,
        objects,
        prune: false,
        inventory,
      });
      const wall = performance.now() - start;
      if (result.phase !== "Succeeded") throw new Error(`sync ${result.phase}: ${result.message}`);
      inventory = result.inventory;
      return { wall, cpu: cpuMs(cpu), writes: result.writes, unchanged: result.totals.unchanged };
    };
    progress(`health-resync: cold sync of ${objects.length} objects into ${ns}`);
    await run(plain);
    await waitDeploymentsReady(admin, ns);
    // One untimed resync per side: settles what the first sync left, and warms the Lua VM's JIT
    // as a running controller's earlier resyncs have.
    for (const side of Object.values(sides)) await run(side);
    const runs: Record<Side, Array<Awaited<ReturnType<typeof run>>>> = { none: [], typical: [], every: [] };
    const order: Side[] = ["none", "typical", "every"];
    const load: number[] = [];
    for (let t = 0; t < trials; t++) {
      // Rotating order, so no side always runs on the warmer server.
      for (let k = 0; k < order.length; k++) {
        const side = order[(t + k) % order.length] as Side;
        runs[side].push(await run(sides[side]));
      }
      load.push(loadavg()[0] ?? 0);
      progress(
        `no-op resync ${t + 1}/${trials}: ${order.map((o) => `${o} ${runs[o].at(-1)?.wall.toFixed(0)} ms`).join(", ")}; load ${load.at(-1)?.toFixed(2)}`,
      );
    }
    const writes = Object.values(runs)
      .flat()
      .reduce((n, r) => n + r.writes, 0);
    if (writes > 0) progress(`health-resync: ${writes} writes during no-op resyncs (expected 0)`);
    const measure = (side: Side, label: string) => {
      const ratios = runs[side].map((r, i) => r.wall / (runs.none[i]?.wall ?? r.wall));
      const walls = runs[side].map((r) => r.wall);
      const baseline = runs.none.map((r) => r.wall);
      return {
        name: `no-op resync, ${objects.length.toLocaleString("en")} objects, ${label}`,
        unit: "ms",
        syncward: median(walls),
        baseline: { name: "no Lua checks", value: median(baseline) },
        ratio: median(ratios),
        ratioMeaning: "with Lua / without (wall time, median of per-trial ratios)",
        target: "at most 20% slower (ratio <= 1.2)",
        met: median(ratios) <= 1.2,
        samples: { syncward: walls, baseline, ratio: ratios },
        details: {
          ratioOfMedians: median(walls) / median(baseline),
          cpuMs: { lua: median(runs[side].map((r) => r.cpu)), without: median(runs.none.map((r) => r.cpu)) },
          unchanged: runs[side][0]?.unchanged,
          writes,
          loadAverage: load,
        },
      };
    };
    return {
      measurements: [
        measure("typical", "Lua checks for Deployments (200 objects)"),
        measure("every", "Lua checks on every object"),
      ],
    };
  } finally {
    kube.close();
    await namespaces.removeAll();
    admin.close();
  }
}
