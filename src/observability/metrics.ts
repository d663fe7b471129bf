// Prometheus metrics for syncward. A Registry of its own (not prom-client's global one), so that
// tests and several Probot instances in one process never share or double-register series.
// The reconciler's events feed it (`recordEvent`); the GitHub layer counts its requests
// (`countGitHubRequest`); the Kubernetes client's own request counters are read at scrape time.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ReconcilerEvent } from "../reconciler/events.ts";

export interface MetricsOptions {
  /**
   * Requests the Kubernetes client(s) made so far, by HTTP verb (e.g. summed `KubeClient.counts.byVerb`).
   * Read at each scrape; without it `syncward_kubernetes_requests_total` stays empty.
   */
  kubernetesRequests?: () => Record<string, number>;
  /** Node.js process metrics (CPU, memory, event loop lag, GC, handles). Default true. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  registry: Registry;
  recordEvent(event: ReconcilerEvent): void;
  countGitHubRequest(method: string, status: number | string): void;
}

/** Sync durations run from a no-op (well under a second) to health waits of several minutes. */
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const syncs = new Counter({
    name: "syncward_syncs_total",
    help: "Sync operations (including self-heals) by environment, trigger and result (Succeeded, Failed, Error, Refused).",
    labelNames: ["environment", "trigger", "result"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "syncward_sync_duration_seconds",
    help: "Wall-clock duration of sync operations (including self-heals and health waits).",
    labelNames: ["environment"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const drift = new Counter({
    name: "syncward_drift_detected_total",
    help: "Times the live cluster was found to differ from Git: each self-heal, and each new out-of-sync state reported.",
    labelNames: ["environment"] as const,
    registers: [registry],
  });
  const selfHeals = new Counter({
    name: "syncward_self_heals_total",
    help: "Self-heal operations (re-applying objects changed out of band).",
    labelNames: ["environment"] as const,
    registers: [registry],
  });
  const fights = new Counter({
    name: "syncward_drift_fights_total",
    help: "Drift fights: an object healed again and again because another field manager keeps changing it.",
    labelNames: ["environment"] as const,
    registers: [registry],
  });
  const securityReverts = new Counter({
    name: "syncward_security_reverts_total",
    help: "Security-relevant out-of-band changes reverted (a new container or image, privileged, host namespaces, hostPath, added capabilities, a changed ServiceAccount), by environment and the field manager that made them.",
    labelNames: ["environment", "manager"] as const,
    registers: [registry],
  });
  const riskyOrphans = new Gauge({
    name: "syncward_risky_undeclared_objects",
    help: "Objects in an environment's namespaces that Git does not declare and that look risky (a DaemonSet, a privileged or hostPath Pod, a powerful binding): left alone, reported.",
    labelNames: ["environment"] as const,
    registers: [registry],
  });
  const events = new Counter({
    name: "syncward_reconciler_events_total",
    help: "Every event the reconciler emitted, by type (synced, selfHealed, outOfSync, renderError, stuck, ...).",
    labelNames: ["environment", "type"] as const,
    registers: [registry],
  });
  const github = new Counter({
    name: "syncward_github_requests_total",
    help: "Requests to the GitHub API by HTTP method and response status.",
    labelNames: ["method", "status"] as const,
    registers: [registry],
  });
  const readKube = options.kubernetesRequests;
  new Counter({
    name: "syncward_kubernetes_requests_total",
    help: "Requests to Kubernetes API servers by HTTP verb.",
    labelNames: ["verb"] as const,
    registers: [registry],
    collect() {
      if (!readKube) return;
      // The client keeps monotonic totals of its own; mirror them at scrape time.
      this.reset();
      for (const [verb, n] of Object.entries(readKube())) this.inc({ verb }, n);
    },
  });

  function recordOperation(environment: string, trigger: string, outcome: SyncOperation): void {
    syncs.inc({ environment, trigger, result: outcome.phase });
    const seconds = (Date.parse(outcome.finishedAt) - Date.parse(outcome.startedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) duration.observe({ environment }, seconds);
  }

  return {
    registry,
    recordEvent(event) {
      const environment = event.env;
      events.inc({ environment, type: event.type });
      switch (event.type) {
        case "synced":
          recordOperation(environment, event.trigger, event.outcome);
          break;
        case "selfHealed":
          recordOperation(environment, "selfHeal", event.outcome);
          selfHeals.inc({ environment });
          drift.inc({ environment });
          for (const r of event.reverted ?? [])
            if (r.security) securityReverts.inc({ environment, manager: r.manager ?? "unknown" });
          break;
        case "orphans":
          riskyOrphans.set({ environment }, event.orphans.filter((o) => o.risk).length);
          break;
        case "outOfSync":
          if (event.drifted.length > 0 || event.requiresPruning.length > 0) drift.inc({ environment });
          break;
        case "driftFight":
          fights.inc({ environment });
          break;
        default:
          // Other events (renderError, stuck, waiting, orphans, ...) are counted by type above.
          break;
      }
    },
    countGitHubRequest(method, status) {
      github.inc({ method: method.toUpperCase(), status: String(status) });
    },
  };
}

/** The part of a SyncOutcome that metrics read. */
interface SyncOperation {
  phase: string;
  startedAt: string;
  finishedAt: string;
}
