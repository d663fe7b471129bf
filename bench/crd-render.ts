// Render and diff of a large CRD set (`crd-render`): ten CustomResourceDefinitions of about 5 MB of
// YAML in prometheus-operator's shape (crd-manifests.ts), laid out as a kustomization. syncward's
// side is what `syncward app diff` does with it short of the API server: render (the kustomize
// source: the pre-check, `kubectl kustomize`, parsing its output, locating each object's file),
// tracking, the comparison and plan against the live set, and the redacted diff text. The live set
// is synthetic, as the API server returns CRDs (server metadata, a managedFields entry whose
// fieldsV1 spans the schema, the status): nine unchanged, one with a description edited by hand.
// The peer is `kubectl kustomize` alone on the same folder, which syncward's render runs inside it;
// the difference is syncward's own cost. Sides alternate; wall-clock medians. No cluster.
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { comparerFor } from "../src/engine/assess.ts";
import { environmentDiff } from "../src/engine/environment-diff.ts";
import { planSync } from "../src/engine/plan.ts";
import { withTracking } from "../src/engine/tracking.ts";
import { type KubeObject, keyOf, keyString } from "../src/kube/object.ts";
import { render } from "../src/source/render.ts";
import { envConfig } from "../test/support/env.ts";
import { writeCrdSet } from "./crd-manifests.ts";
import { type BenchContext, type BenchResult, median, progress } from "./support.ts";

const GROUP = "monitoring.bench.syncward.dev";
const INSTANCE = "bench.crds";
const run = promisify(execFile);

type Json = Record<string, unknown>;

/** fieldsV1 as the API server records an apply: map keys `f:`, the named lists' items `k:{...}`. */
function fieldsOf(value: unknown): Json {
  if (Array.isArray(value)) {
    const out: Json = {};
    value.forEach((item, i) => {
      const key =
        item && typeof item === "object" && "name" in item
          ? `k:${JSON.stringify({ name: (item as Json).name })}`
          : `i:${i}`;
      out[key] = { ".": {}, ...fieldsOf(item) };
    });
    return out;
  }
  if (value && typeof value === "object") {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json))
      out[`f:${k}`] = v && typeof v === "object" ? { ".": {}, ...fieldsOf(v) } : {};
    return out;
  }
  return {};
}

/** A CRD (as applied, with tracking) as a GET returns it once established. */
function liveCrd(obj: KubeObject, index: number): KubeObject {
  const live = structuredClone(obj) as KubeObject & Json;
  const spec = live.spec as Json;
  live.spec = { ...spec, conversion: { strategy: "None" } };
  live.metadata = {
    ...live.metadata,
    uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
    resourceVersion: String(200_000 + index),
    generation: 1,
    creationTimestamp: "2026-11-29T20:00:00Z",
    managedFields: [
      {
        manager: "syncward",
        operation: "Apply",
        apiVersion: "apiextensions.k8s.io/v1",
        time: "2026-11-29T20:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: fieldsOf({
          metadata: { annotations: obj.metadata.annotations, labels: obj.metadata.labels },
          spec,
        }),
      },
      {
        manager: "kube-apiserver",
        operation: "Update",
        apiVersion: "apiextensions.k8s.io/v1",
        time: "2026-11-29T20:00:01Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:status": { "f:acceptedNames": {}, "f:conditions": {}, "f:storedVersions": {} } },
        subresource: "status",
      },
    ],
  };
  const versions = spec.versions as Json[];
  live.status = {
    acceptedNames: spec.names,
    conditions: [
      {
        type: "NamesAccepted",
        status: "True",
        reason: "NoConflicts",
        lastTransitionTime: "2026-11-29T20:00:01Z",
      },
      {
        type: "Established",
        status: "True",
        reason: "InitialNamesAccepted",
        lastTransitionTime: "2026-11-29T20:00:01Z",
      },
    ],
    storedVersions: versions.filter((v) => v.storage).map((v) => v.name),
  };
  return live;
}

/** Someone edited one description deep inside the live schema. */
function editDescription(live: KubeObject): void {
  const versions = (live.spec as Json).versions as Json[];
  const schema = (versions[0]!.schema as Json).openAPIV3Schema as Json;
  const spec = (schema.properties as Json).spec as Json;
  const first = Object.values(spec.properties as Json)[0] as Json;
  first.description = "Edited by hand in the cluster.";
}

interface Trial {
  totalMs: number;
  /** The process's own CPU (kubectl's, a child's, not counted): what load on the machine moves least. */
  cpuMs: number;
  renderMs: number;
  planMs: number;
  diffMs: number;
}

async function syncwardSide(dir: string, live: Map<string, KubeObject>, env: ReturnType<typeof envConfig>) {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const rendered = await render(dirname(dir), "setup");
  const t1 = performance.now();
  const plan = planSync({
    instance: INSTANCE,
    desired: rendered.objects.map((o) => withTracking(o, INSTANCE)),
    live,
    compare: comparerFor(env),
    prune: false,
    allowEmpty: false,
    failOnSharedResource: false,
  });
  const t2 = performance.now();
  const text = environmentDiff(plan, env);
  const t3 = performance.now();
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  const trial: Trial = { totalMs: t3 - t0, cpuMs, renderMs: t1 - t0, planMs: t2 - t1, diffMs: t3 - t2 };
  return { trial, plan, text };
}

async function kustomizeAlone(dir: string): Promise<number> {
  const t = performance.now();
  await run("kubectl", ["kustomize", dir], { maxBuffer: 256 * 1024 * 1024 });
  return performance.now() - t;
}

export async function crdRender(ctx: BenchContext): Promise<BenchResult> {
  const pairs = Number(process.env.SYNCWARD_BENCH_CRD_PAIRS ?? (ctx.quick ? 3 : 7));
  const bytes = Number(process.env.SYNCWARD_BENCH_CRD_BYTES ?? 5_000_000);
  const set = writeCrdSet(GROUP, bytes);
  try {
    const env = envConfig("bench-crds");
    const desired = (await render(dirname(set.dir), "setup")).objects;
    const live = new Map<string, KubeObject>();
    desired.forEach((o, i) => {
      const l = liveCrd(withTracking(o, INSTANCE), i);
      if (i === 4) editDescription(l);
      live.set(keyString(keyOf(l)), l);
    });
    // One untimed pass of each side warms the file cache and checks the outcome.
    const first = await syncwardSide(set.dir, live, env);
    await kustomizeAlone(set.dir);
    const updates = first.plan.steps.flatMap((s) => s.tasks).filter((t) => t.action !== "unchanged");
    if (desired.length !== 10 || updates.length !== 1 || !first.text.includes("Edited by hand"))
      throw new Error(
        `unexpected outcome: ${desired.length} objects, ${updates.length} to update, diff of ${first.text.length} characters`,
      );
    progress(
      `crd-render: ${desired.length} CRDs, ${(set.bytes / 1e6).toFixed(1)} MB of YAML, ${pairs} pairs`,
    );
    const trials: Trial[] = [];
    const kustomize: number[] = [];
    for (let i = 0; i < pairs; i++) {
      // Alternate which side goes first, so the machine's load moves both alike.
      if (i % 2 === 1) kustomize.push(await kustomizeAlone(set.dir));
      trials.push((await syncwardSide(set.dir, live, env)).trial);
      if (i % 2 === 0) kustomize.push(await kustomizeAlone(set.dir));
      const t = trials.at(-1)!;
      progress(
        `crd-render pair ${i + 1}/${pairs}: syncward ${t.totalMs.toFixed(0)} ms, ${t.cpuMs.toFixed(0)} ms CPU (render ${t.renderMs.toFixed(0)}, plan ${t.planMs.toFixed(0)}, diff ${t.diffMs.toFixed(0)}), kubectl kustomize ${kustomize.at(-1)?.toFixed(0)} ms`,
      );
    }
    const total = trials.map((t) => t.totalMs);
    const own = trials.map((t, i) => t.totalMs - (kustomize[i] ?? 0));
    const ratios = trials.map((t, i) => t.totalMs / (kustomize[i] ?? t.totalMs));
    const details = {
      bytes: set.bytes,
      objects: desired.length,
      renderMs: median(trials.map((t) => t.renderMs)),
      planMs: median(trials.map((t) => t.planMs)),
      diffMs: median(trials.map((t) => t.diffMs)),
      diffCharacters: first.text.length,
    };
    return {
      measurements: [
        {
          name: `render + parse + diff of 10 CRDs (${(set.bytes / 1e6).toFixed(1)} MB), vs \`kubectl kustomize\` alone`,
          unit: "ms",
          syncward: median(total),
          baseline: { name: "kubectl kustomize", value: median(kustomize) },
          ratio: median(ratios),
          ratioMeaning: "syncward render + diff / kubectl kustomize alone",
          samples: { syncward: total, baseline: kustomize, ratio: ratios },
          details,
        },
        {
          name: "the same, syncward's own part (its time minus kubectl kustomize's in the pair)",
          unit: "ms",
          syncward: median(own),
          target: "< 1 s",
          met: median(own) < 1000,
          samples: { syncward: own },
        },
        {
          name: "the same, syncward's own part as its process's CPU time (render, parse, plan, diff; kubectl's not counted)",
          unit: "ms",
          syncward: median(trials.map((t) => t.cpuMs)),
          target: "< 1 s",
          met: median(trials.map((t) => t.cpuMs)) < 1000,
          samples: { syncward: trials.map((t) => t.cpuMs) },
        },
      ],
      data: { trials, kustomize },
    };
  } finally {
    rmSync(dirname(set.dir), { recursive: true, force: true });
  }
}
