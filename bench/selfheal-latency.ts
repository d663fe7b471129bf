// Benchmark 2: how long an out-of-band change survives. An EnvironmentController with selfHeal on
// guards a Deployment at 3 replicas (a real git repository, a StateStore, watches; polling off).
// Trials take turns among four attacks: scaling through the scale subresource, adding a sidecar
// container (a strategic-merge PATCH, as kubectl-bench and again under the trusted name
// kube-controller-manager, which is trusted for the replica count only) and setting
// `privileged: true` on the declared container (a JSON PATCH); each is timed, from just before
// the PATCH, until a watch of our own sees it undone. The last three are removals: server-side apply alone cannot undo them (another manager's fields).
//
// Independence of trials: after 3 heals of one object at one revision within 10 minutes the
// controller backs off (drift-fight protection). So before every trial an empty commit makes a new
// revision; the controller syncs it (no writes: nothing changed), which resets the heal counters,
// and the trial's heal is always the first at its revision.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { EnvironmentController } from "../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../src/reconciler/events.ts";
import { LocalGitSource } from "../src/reconciler/revision-source.ts";
import { StateStore } from "../src/state/store.ts";
import { envConfig } from "../test/support/env.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { DeploymentObserver, type ObservedEvent } from "./deployment-observer.ts";
import { emitTo, nextEvent } from "./reconciler-events.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  median,
  medianAndP99,
  Namespaces,
  percentile,
  progress,
} from "./support.ts";

const TRIAL_TIMEOUT_MS = 30_000;

/** ConfigMaps beside the guarded Deployment, 100 to a file, so the environment has its benchmark size. */
function fillerFiles(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const file = `deploy/config-${String(Math.floor(i / 100)).padStart(3, "0")}.yaml`;
    files[file] = `${files[file] ?? ""}---
apiVersion: v1
kind: ConfigMap
metadata: {name: config-${i}}
data: {index: "${i}", level: info}
`;
  }
  return files;
}

const deploymentYaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
`;

interface Attack {
  name: "replicas" | "sidecar" | "privileged" | "spoofed-sidecar";
  path: string;
  /** The field manager the attack writes under (default kubectl-bench). */
  manager?: string;
  body: (k: number) => unknown;
  contentType: string;
  undone: (e: ObservedEvent) => boolean;
}

const ATTACKS: Attack[] = [
  {
    name: "replicas",
    path: "/scale",
    body: (k) => ({ spec: { replicas: 4 + (k % 6) } }),
    contentType: "application/merge-patch+json",
    undone: (e) => e.replicas === 3,
  },
  {
    name: "sidecar",
    path: "",
    body: () => ({ spec: { template: { spec: { containers: [{ name: "miner", image: "evil:1" }] } } } }),
    contentType: "application/strategic-merge-patch+json",
    undone: (e) => e.containers === 1,
  },
  {
    // The sidecar again, under the controller manager's trusted name: trusted by field, not by name.
    name: "spoofed-sidecar",
    path: "",
    manager: "kube-controller-manager",
    body: () => ({ spec: { template: { spec: { containers: [{ name: "miner", image: "evil:1" }] } } } }),
    contentType: "application/strategic-merge-patch+json",
    undone: (e) => e.containers === 1,
  },
  {
    name: "privileged",
    path: "",
    body: () => [
      {
        op: "add",
        path: "/spec/template/spec/containers/0/securityContext",
        value: { privileged: true },
      },
    ],
    contentType: "application/json-patch+json",
    undone: (e) => !e.privileged,
  },
];

const LABELS = {
  sidecar: "sidecars",
  "spoofed-sidecar": "sidecars under --field-manager=kube-controller-manager",
  privileged: "privileged: true",
} as const;

interface HealTrial {
  attack: Attack["name"];
  /** PATCH sent -> our watch sees replicas back at 3. */
  healMs: number;
  /** PATCH sent -> PATCH response. */
  patchMs: number;
  /** PATCH sent -> our watch sees the drift. */
  driftSeenMs: number;
  /** PATCH sent -> the controller reports its heal done (selfHealed event, after its state write). */
  controllerReportedMs?: number;
}

/** `objects`: the environment's size; the guarded Deployment plus ConfigMaps up to that count. */
export async function selfHealLatency(
  ctx: BenchContext,
  o: { objects?: number; trials?: number } = {},
): Promise<BenchResult> {
  const TRIALS = o.trials ?? Number(process.env.SYNCWARD_BENCH_HEAL_TRIALS ?? (ctx.quick ? 12 : 60));
  const objects = Math.max(1, o.objects ?? Number(process.env.SYNCWARD_BENCH_HEAL_OBJECTS ?? 1));
  const admin = client(ctx);
  const controllerClient = client(ctx);
  const observerClient = client(ctx);
  const namespaces = new Namespaces(admin, "bench-heal");
  const cache = mkdtempSync(join(tmpdir(), "syncward-bench-trees-"));
  const repo = makeRepo({ "deploy/web.yaml": deploymentYaml, ...fillerFiles(objects - 1) });
  const listeners = new Set<(e: ReconcilerEvent) => void>();
  const trials: HealTrial[] = [];
  let failures = 0;
  let driftFights = 0;
  listeners.add((e) => {
    if (e.type === "driftFight") driftFights++;
  });
  let controller: EnvironmentController | undefined;
  let observer: DeploymentObserver | undefined;
  try {
    const ns = await namespaces.create("app");
    const stateNs = await namespaces.create("state");
    controller = new EnvironmentController({
      app: "bench",
      env: envConfig(ns, {
        source: { path: "deploy" },
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      }),
      client: controllerClient,
      store: new StateStore(controllerClient, stateNs),
      source: new LocalGitSource(repo.dir, cache),
      emit: emitTo(listeners),
      log: pino({ level: "silent" }),
      pollIntervalMs: 0,
    });
    const firstSync = nextEvent(listeners, (e) => e.type === "synced", 60_000);
    controller.start();
    await firstSync;
    await controller.idle();
    observer = new DeploymentObserver(observerClient, ns, "web");
    await observer.start();
    progress(`self-heal: controller synced ${ns} (${objects} objects); ${TRIALS} trials`);

    const settled = (e: ObservedEvent) =>
      e.replicas === 3 &&
      e.statusReplicas === 3 &&
      e.readyReplicas === 3 &&
      e.containers === 1 &&
      !e.privileged;
    for (let k = 0; k < TRIALS; k++) {
      // A new revision resets the drift-fight counters (see the comment at the top).
      const sha = repo.commit({}, `trial ${k}`);
      const synced = nextEvent(listeners, (e) => e.type === "synced" && e.revision === sha, 60_000);
      controller.nudge("push", "bench");
      await synced;
      await controller.idle();
      const last = observer.events.at(-1);
      if (!last || !settled(last)) await observer.next(settled, observer.events.length, 30_000);

      const attack = ATTACKS[k % ATTACKS.length] as Attack;
      const from = observer.events.length;
      const reported = nextEvent(listeners, (e) => e.type === "selfHealed", TRIAL_TIMEOUT_MS).catch(
        () => undefined,
      );
      const start = performance.now();
      const scale = await observerClient.request<{ metadata: { resourceVersion: string } }>(
        "PATCH",
        `/apis/apps/v1/namespaces/${ns}/deployments/web${attack.path}?fieldManager=${attack.manager ?? "kubectl-bench"}`,
        { body: attack.body(k), contentType: attack.contentType },
      );
      const patchMs = performance.now() - start;
      const drift = await observer.next(
        (e) => e.resourceVersion === scale.metadata.resourceVersion,
        from,
        TRIAL_TIMEOUT_MS,
      );
      const healed = drift && (await observer.next(attack.undone, drift.index + 1, TRIAL_TIMEOUT_MS));
      const report = await reported;
      if (!drift || !healed) {
        failures++;
        progress(`self-heal trial ${k + 1} (${attack.name}): not healed within ${TRIAL_TIMEOUT_MS / 1000}s`);
        continue;
      }
      trials.push({
        attack: attack.name,
        healMs: healed.event.at - start,
        patchMs,
        driftSeenMs: drift.event.at - start,
        controllerReportedMs: report ? report.at - start : undefined,
      });
      await controller.idle();
    }
  } finally {
    await observer?.stop();
    await controller?.stop();
    controllerClient.close();
    observerClient.close();
    await namespaces.removeAll();
    admin.close();
    rmSync(repo.dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  }

  const heal = trials.filter((t) => t.attack === "replicas").map((t) => t.healMs);
  const healOf = (name: Attack["name"]) => trials.filter((t) => t.attack === name).map((t) => t.healMs);
  const reportedMs = trials.flatMap((t) =>
    t.controllerReportedMs === undefined ? [] : [t.controllerReportedMs],
  );
  const summary = {
    objects,
    trials: TRIALS,
    healed: trials.length,
    failures,
    method: "watch (own client), timed from just before the attack's PATCH",
    byAttack: Object.fromEntries(
      ATTACKS.map((a) => [
        a.name,
        {
          trials: healOf(a.name).length,
          medianMs: median(healOf(a.name)),
          p99Ms: percentile(healOf(a.name), 99),
        },
      ]),
    ),
    revisionPerTrial: true,
    driftFightAlerts: driftFights,
    healMedianMs: median(heal),
    healP90Ms: percentile(heal, 90),
    healP99Ms: percentile(heal, 99),
    healMinMs: Math.min(...heal),
    healMaxMs: Math.max(...heal),
    driftSeenMedianMs: median(trials.map((t) => t.driftSeenMs)),
    patchMedianMs: median(trials.map((t) => t.patchMs)),
    controllerReportedMedianMs: median(reportedMs),
  };
  return {
    measurements: [
      ...medianAndP99(
        `drift-to-revert (self-heal), ${heal.length} replica edits${objects > 1 ? `, ${objects.toLocaleString("en")} objects` : ""}`,
        heal,
        {
          median: ["< 1 s", 1000],
          p99: ["< 3 s", 3000],
          ok: failures === 0,
          details: {
            failures,
            driftSeenMedianMs: summary.driftSeenMedianMs,
            controllerReportedMedianMs: summary.controllerReportedMedianMs,
          },
        },
      ),
      ...(["sidecar", "spoofed-sidecar", "privileged"] as const).flatMap((name) =>
        medianAndP99(
          `drift-to-revert (self-heal), ${healOf(name).length} added ${LABELS[name]}`,
          healOf(name),
          {
            median: ["< 1 s", 1000],
            p99: ["< 3 s", 3000],
            ok: failures === 0,
          },
        ),
      ),
    ],
    data: { summary, trials },
  };
}
