// Opt-in benchmark `promotion`: how long after the upstream's healthyFor window closes the
// downstream starts its sync. A Reconciler (watches on, polling off) runs staging and prod
// (promotion after staging, healthyFor 1s) from a real git repository; each trial commits a new
// version, nudges staging, and measures from the moment staging's record says the window closes
// (its `since` + healthyFor, the writer's clock, which is this process's) to the arrival of prod's
// syncStarted event for that commit. Goal: under 1 s.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { stringify } from "yaml";
import { parseConfig } from "../src/config/load.ts";
import type { ReconcilerEvent } from "../src/reconciler/events.ts";
import { Reconciler } from "../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../src/reconciler/revision-source.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import {
  type BenchContext,
  type BenchResult,
  client,
  medianAndP99,
  Namespaces,
  progress,
} from "./support.ts";

const HEALTHY_FOR = 1_000;
const TRIAL_TIMEOUT_MS = 30_000;

const files = (version: number) => ({
  "staging/settings.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {version: "${version}"}\n`,
  "prod/settings.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {version: "${version}"}\n`,
});

/** Resolves with Date.now() at the first event matching `match`. */
function arrival(listeners: Set<(e: ReconcilerEvent) => void>, match: (e: ReconcilerEvent) => boolean) {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      listeners.delete(listener);
      reject(new Error(`no matching event within ${TRIAL_TIMEOUT_MS} ms`));
    }, TRIAL_TIMEOUT_MS);
    const listener = (e: ReconcilerEvent) => {
      if (!match(e)) return;
      clearTimeout(timer);
      listeners.delete(listener);
      resolve(Date.now());
    };
    listeners.add(listener);
  });
}

export async function promotionLatency(ctx: BenchContext): Promise<BenchResult> {
  const trials = Number(process.env.SYNCWARD_BENCH_PROMOTION_TRIALS ?? (ctx.quick ? 5 : 20));
  const admin = client(ctx);
  const namespaces = new Namespaces(admin, "bench-promo");
  const listeners = new Set<(e: ReconcilerEvent) => void>();
  const samples: number[] = [];
  let reconciler: Reconciler | undefined;
  try {
    const staging = await namespaces.create("stg");
    const prod = await namespaces.create("prod");
    const stateNs = await namespaces.create("state");
    const repo = makeRepo(files(0));
    const automated = { automated: { prune: true, selfHeal: true } };
    reconciler = new Reconciler({
      app: `bench-${prod}`,
      config: parseConfig(
        stringify({
          environments: [
            {
              name: "staging",
              source: { path: "staging" },
              destination: { namespace: staging },
              syncPolicy: automated,
            },
            {
              name: "prod",
              source: { path: "prod" },
              destination: { namespace: prod },
              syncPolicy: automated,
              promotion: { after: "staging", healthyFor: `${HEALTHY_FOR}ms` },
            },
          ],
        }),
      ),
      client: client(ctx),
      source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-bench-trees-"))),
      emit: (e) => {
        for (const l of [...listeners]) l(e);
      },
      log: pino({ level: "silent" }),
      stateNamespace: stateNs,
      identity: "bench-promotion",
      leases: false,
      watch: true,
      pollIntervalMs: 0,
    });
    const r = reconciler;
    const prodStarted = (revision: string) =>
      arrival(listeners, (e) => e.type === "syncStarted" && e.env === "prod" && e.revision === revision);
    const first = prodStarted(repo.head());
    r.start();
    await first;
    for (let i = 1; i <= trials; i++) {
      const revision = repo.commit(files(i), `version ${i}`);
      const started = prodStarted(revision);
      r.controller("staging").nudge("push", "bench");
      const at = await started;
      const state = await r.store.load(r.controller("staging").instance);
      const record = state.healthRecords?.findLast((h) => h.revision === revision);
      if (!record) throw new Error(`staging has no health record of ${revision.slice(0, 7)}`);
      samples.push(at - (Date.parse(record.since) + HEALTHY_FOR));
      progress(`promotion trial ${i}/${trials}: ${samples.at(-1)} ms after the window closed`);
    }
  } finally {
    await reconciler?.stop();
    await namespaces.removeAll();
    admin.close();
  }
  return {
    measurements: medianAndP99("promotion: upstream window closed -> downstream sync started", samples, {
      median: ["< 1 s", 1_000],
      p99: ["< 1 s", 1_000],
      details: { healthyForMs: HEALTHY_FOR, trials },
    }),
    data: { promotionLatencyMs: samples },
  };
}
