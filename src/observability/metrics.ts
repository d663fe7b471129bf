// Prometheus metrics for syncward. A Registry of its own (not prom-client's global one), so that
// tests and several Probot instances in one process never share or double-register series.
// The reconciler's events feed it (`recordEvent`); the GitHub layer counts its requests
// (`countGitHubRequest`); the Kubernetes clients' own request counters are read at scrape time;
// the durations of passes, renders, fetches and webhooks come over a diagnostics channel
// (durations.ts).
// Every per-environment series carries `app` and `environment`, so two repositories with a `prod`
// environment never share one; label values are names from configs and fixed vocabularies (no
// revisions, no messages), so the series stay bounded.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { buildInfo } from "../build-info.ts";
import { worstHealth } from "../engine/health/index.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import { type AppStatus, appStatusAfter } from "./app-status.ts";
import { onDuration, type Timing } from "./durations.ts";
import type { Placement } from "./placement.ts";

export interface MetricsOptions {
  /**
   * Requests the Kubernetes clients answered or failed so far, by cluster name, then HTTP verb,
   * then status code or "error" (each client's `counts.byVerbAndCode`). Read at each scrape;
   * without it `syncward_kubernetes_requests_total` stays empty.
   */
  kubernetesRequests?: () => Iterable<
    [cluster: string, byVerbAndCode: Record<string, Record<string, number>>]
  >;
  /**
   * The clusters syncward talks to, by name, with their current outage if any. Read at each
   * scrape for `syncward_cluster_reachable` and `syncward_cluster_unreachable_since_seconds`.
   */
  clusters?: () => Iterable<[name: string, outage: { since: number } | undefined]>;
  /** Node.js process metrics (CPU, memory, event loop lag, GC, handles). Default true. */
  defaultMetrics?: boolean;
  /** The process's reconcile, render, fetch and webhook durations (durations.ts). Default true. */
  durations?: boolean;
}

export interface Metrics {
  registry: Registry;
  /** `placement`: where the event's environment deploys (its `syncward_app_info` labels). */
  recordEvent(event: ReconcilerEvent, placement?: Placement): void;
  /** `status` is the HTTP status, or "error" when no response came (a network failure). */
  countGitHubRequest(method: string, status: number | string): void;
  githubRateLimit(remaining: number, limit: number): void;
  /** How many recorded previews are being torn down, as the last read of the records found. */
  previewTeardownsPending(count: number): void;
  /**
   * Sets an environment's `syncward_app_info` series to `status` (read from the stored state),
   * labelled with its placement when given (else the last one known); undefined drops it (the
   * environment left the config, or its app stopped here).
   */
  setAppStatus(
    labels: { app: string; environment: string; placement?: Placement },
    status: AppStatus | undefined,
  ): void;
  /** Stops observing the process's durations (a registry that is thrown away). */
  close(): void;
}

/** The app of an event: its instance name (`app.env`, see instanceName) without the environment. */
export function appOf(event: { instance: string; env: string }): string {
  const suffix = `.${event.env.toLowerCase().replace(/[^a-z0-9.-]/g, "-")}`;
  if (event.instance.endsWith(suffix)) return event.instance.slice(0, -suffix.length);
  // A long instance is cut and hashed (state/identity.ts); an app's identity holds no dot.
  const dot = event.instance.indexOf(".");
  return dot > 0 ? event.instance.slice(0, dot) : event.instance;
}

/** Sync durations run from a no-op (well under a second) to health waits of several minutes. */
const DURATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** A pass: an idle poll's few milliseconds up to a sync's health wait. */
const PASS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** Renders and fetches: a cached tree's milliseconds up to a large chart or a slow download. */
const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const syncs = new Counter({
    name: "syncward_syncs_total",
    help: "Sync operations (including self-heals) by environment, trigger and result (Succeeded, Failed, Error, Refused).",
    labelNames: ["app", "environment", "trigger", "result"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "syncward_sync_duration_seconds",
    help: "Wall-clock duration of sync operations (including self-heals and health waits).",
    labelNames: ["app", "environment"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const drift = new Counter({
    name: "syncward_drift_detected_total",
    help: "Times the live cluster was found to differ from Git: each self-heal, and each new out-of-sync state reported.",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const selfHeals = new Counter({
    name: "syncward_self_heals_total",
    help: "Self-heal operations (re-applying objects changed out of band).",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const fights = new Counter({
    name: "syncward_drift_fights_total",
    help: "Drift fights: an object healed again and again because another field manager keeps changing it.",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const securityReverts = new Counter({
    name: "syncward_security_reverts_total",
    help: "Security-relevant out-of-band changes reverted (a new container or image, privileged, host namespaces, hostPath, added capabilities, a changed ServiceAccount), by environment and the field manager that made them.",
    labelNames: ["app", "environment", "manager"] as const,
    registers: [registry],
  });
  const riskyOrphans = new Gauge({
    name: "syncward_risky_undeclared_objects",
    help: "Objects in an environment's namespaces that Git does not declare and that look risky (a DaemonSet, a privileged or hostPath Pod, a powerful binding): left alone, reported.",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const autoRollbacks = new Counter({
    name: "syncward_auto_rollbacks_total",
    help: 'Releases that stayed Degraded or failed for rollback.onDegraded, by result: "rolledBack" (went back to the last Healthy release and pinned there) or "refused" (not rolled back: a CRD or hook in between, no Healthy release, the gate).',
    labelNames: ["app", "environment", "result"] as const,
    registers: [registry],
  });
  const events = new Counter({
    name: "syncward_reconciler_events_total",
    help: "Every event the reconciler emitted, by type (synced, selfHealed, outOfSync, renderError, stuck, ...).",
    labelNames: ["app", "environment", "type"] as const,
    registers: [registry],
  });
  const github = new Counter({
    name: "syncward_github_requests_total",
    help: 'Requests to the GitHub API by HTTP method and response status (failures included; status "error" when no response came).',
    labelNames: ["method", "status"] as const,
    registers: [registry],
  });
  const appInfo = new Gauge({
    name: "syncward_app_info",
    help: "One series per environment with where it deploys (project, cluster, destination namespace) and its current sync and health status (value 1), like argocd_app_info.",
    labelNames: [
      "app",
      "environment",
      "project",
      "cluster",
      "destination_namespace",
      "sync_status",
      "health_status",
    ] as const,
    registers: [registry],
  });
  const lastSync = new Gauge({
    name: "syncward_last_sync_timestamp_seconds",
    help: "When the last successful sync (or self-heal) of an environment finished, in Unix seconds.",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const pinned = new Gauge({
    name: "syncward_environment_pinned",
    help: "1 while a rollback pins the environment at an earlier revision (automated syncs and promotions hold until /unpin or syncward app unpin), else 0; read from the stored state.",
    labelNames: ["app", "environment"] as const,
    registers: [registry],
  });
  const info = buildInfo();
  new Gauge({
    name: "syncward_build_info",
    help: "The running build: version, commit and Node.js version (value 1).",
    labelNames: ["version", "commit", "node"] as const,
    registers: [registry],
  }).set({ version: info.version, commit: info.commit, node: process.versions.node }, 1);
  const rateRemaining = new Gauge({
    name: "syncward_github_rate_limit_remaining",
    help: "GitHub API requests left in the current rate-limit window, from the last response's x-ratelimit-remaining.",
    registers: [registry],
  });
  const rateLimit = new Gauge({
    name: "syncward_github_rate_limit_limit",
    help: "The GitHub API rate limit of the window, from the last response's x-ratelimit-limit.",
    registers: [registry],
  });
  const teardownsPending = new Gauge({
    name: "syncward_preview_teardowns_pending",
    help: "Preview environments whose teardown has begun and not finished (their namespace not yet gone), from the preview records at the last sweep; every replica reports the same records.",
    registers: [registry],
  });
  const statuses = new Map<string, Shown>();
  const readKube = options.kubernetesRequests;
  new Counter({
    name: "syncward_kubernetes_requests_total",
    help: 'Requests to Kubernetes API servers by cluster, HTTP verb and response status code ("error" when no response came), counted when they end.',
    labelNames: ["cluster", "verb", "code"] as const,
    registers: [registry],
    collect() {
      if (!readKube) return;
      // The client keeps monotonic totals of its own; mirror them at scrape time.
      this.reset();
      for (const [cluster, byVerb] of readKube())
        for (const [verb, codes] of Object.entries(byVerb))
          for (const [code, n] of Object.entries(codes)) this.inc({ cluster, verb, code }, n);
    },
  });
  const stopDurations = options.durations === false ? () => {} : observeDurations(registry);

  const readClusters = options.clusters;
  new Gauge({
    name: "syncward_cluster_reachable",
    help: "1 while the cluster's API server answers, 0 from its first request that got no answer.",
    labelNames: ["cluster"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [cluster, outage] of readClusters?.() ?? []) this.set({ cluster }, outage ? 0 : 1);
    },
  });
  new Gauge({
    name: "syncward_cluster_unreachable_since_seconds",
    help: "When the cluster's current outage began (Unix time); no series while it answers.",
    labelNames: ["cluster"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [cluster, outage] of readClusters?.() ?? [])
        if (outage) this.set({ cluster }, outage.since / 1000);
    },
  });

  function recordOperation(labels: Labels, trigger: string, outcome: SyncOperation): void {
    syncs.inc({ ...labels, trigger, result: outcome.phase });
    const seconds = (Date.parse(outcome.finishedAt) - Date.parse(outcome.startedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) duration.observe(labels, seconds);
    if (outcome.phase === "Succeeded" && !outcome.dryRun)
      lastSync.set(labels, Date.parse(outcome.finishedAt) / 1000);
  }

  /** One series per environment: the old one goes when its status or placement changes. */
  function setStatus(labels: Labels, placement: Placement | undefined, after: AppStatus | undefined): void {
    const key = `${labels.app}\u0000${labels.environment}`;
    const before = statuses.get(key);
    const where = placement ?? before?.placement;
    if (after) pinned.set(labels, after.pinned ? 1 : 0);
    else pinned.remove(labels);
    if (before && after && sameShown(before, { status: after, placement: where })) {
      // The same series; what it does not show (the pin) is kept for the next event.
      statuses.set(key, { status: after, placement: where });
      return;
    }
    if (before) appInfo.remove(infoLabels(labels, before));
    if (after) {
      const shown = { status: after, placement: where };
      appInfo.set(infoLabels(labels, shown), 1);
      statuses.set(key, shown);
    } else statuses.delete(key);
  }

  function updateStatus(labels: Labels, placement: Placement | undefined, event: ReconcilerEvent): void {
    const key = `${labels.app}\u0000${labels.environment}`;
    setStatus(
      labels,
      placement,
      appStatusAfter(statuses.get(key)?.status, event, (resources) => worstHealth(resources)?.status),
    );
  }

  return {
    registry,
    recordEvent(event, placement) {
      const labels: Labels = { app: appOf(event), environment: event.env };
      events.inc({ ...labels, type: event.type });
      updateStatus(labels, placement, event);
      switch (event.type) {
        case "synced":
          recordOperation(labels, event.trigger, event.outcome);
          break;
        case "selfHealed":
          recordOperation(labels, "selfHeal", event.outcome);
          selfHeals.inc(labels);
          drift.inc(labels);
          for (const r of event.reverted ?? [])
            if (r.security) securityReverts.inc({ ...labels, manager: r.manager ?? "unknown" });
          break;
        case "orphans":
          riskyOrphans.set(labels, event.orphans.filter((o) => o.risk).length);
          break;
        case "outOfSync":
          if (event.drifted.length > 0 || event.requiresPruning.length > 0) drift.inc(labels);
          break;
        case "driftFight":
          fights.inc(labels);
          break;
        case "autoRollback":
          autoRollbacks.inc({ ...labels, result: event.refused === undefined ? "rolledBack" : "refused" });
          break;
        default:
          // Other events (renderError, stuck, waiting, orphans, ...) are counted by type above.
          break;
      }
    },
    githubRateLimit(remaining, limit) {
      rateRemaining.set(remaining);
      rateLimit.set(limit);
    },
    previewTeardownsPending(count) {
      teardownsPending.set(count);
    },
    setAppStatus(labels, status) {
      setStatus({ app: labels.app, environment: labels.environment }, labels.placement, status);
    },
    close: stopDurations,
    countGitHubRequest(method, status) {
      github.inc({ method: method.toUpperCase(), status: String(status) });
    },
  };
}

interface Labels {
  app: string;
  environment: string;
}

/** What an environment's `syncward_app_info` series shows. */
interface Shown {
  status: AppStatus;
  placement: Placement | undefined;
}

function sameShown(a: Shown, b: Shown): boolean {
  return (
    a.status.sync === b.status.sync &&
    a.status.health === b.status.health &&
    a.placement?.project === b.placement?.project &&
    a.placement?.cluster === b.placement?.cluster &&
    a.placement?.namespace === b.placement?.namespace
  );
}

/** Placement labels only when known; an environment without a project has an empty `project`. */
function infoLabels(labels: Labels, shown: Shown): Record<string, string> {
  const p = shown.placement;
  return {
    ...labels,
    ...(p ? { project: p.project ?? "", cluster: p.cluster, destination_namespace: p.namespace } : {}),
    sync_status: shown.status.sync,
    health_status: shown.status.health,
  };
}

/**
 * The histograms of the process's durations (durations.ts). `app` comes from the instance as in
 * every other per-environment series, so they join; webhooks by event name (a fixed vocabulary).
 */
function observeDurations(registry: Registry): () => void {
  const perEnvironment = (name: string, help: string, buckets: number[]) =>
    new Histogram({
      name,
      help,
      labelNames: ["app", "environment"] as const,
      buckets,
      registers: [registry],
    });
  const histograms = {
    reconcile: perEnvironment(
      "syncward_reconcile_duration_seconds",
      "Wall-clock duration of reconcile passes (read, render, compare, and any sync they run), failed ones included.",
      PASS_BUCKETS,
    ),
    render: perEnvironment(
      "syncward_render_duration_seconds",
      "Duration of rendering an environment's manifests at a revision (plain YAML, Kustomize or Helm), failed renders included.",
      STEP_BUCKETS,
    ),
    fetch: perEnvironment(
      "syncward_source_fetch_duration_seconds",
      "Duration of getting the repository tree at a revision for an environment (a download, or the tree cache).",
      STEP_BUCKETS,
    ),
  };
  const webhooks = new Histogram({
    name: "syncward_webhook_duration_seconds",
    help: "Duration of handling a GitHub webhook delivery, by event name, failed ones included.",
    labelNames: ["event"] as const,
    buckets: STEP_BUCKETS,
    registers: [registry],
  });
  return onDuration((t: Timing) => {
    if (t.kind === "webhook") webhooks.observe({ event: t.event }, t.seconds);
    else histograms[t.kind].observe({ app: appOf(t), environment: t.env }, t.seconds);
  });
}

/** The part of a SyncOutcome that metrics read. */
interface SyncOperation {
  phase: string;
  startedAt: string;
  finishedAt: string;
  dryRun?: boolean;
}
