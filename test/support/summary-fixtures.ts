// Values for the summary tests: an environment, its state and sync results, as the engine and
// the state layer produce them.
import type { EnvironmentConfig } from "../../src/config/types.ts";
import type { ResourceResult, SyncResult } from "../../src/engine/result.ts";
import type { EnvironmentState, HistoryEntry } from "../../src/state/types.ts";

export const SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
export const OLD_SHA = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";

export function envConfig(overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return {
    name: "prod",
    source: { path: "deploy/prod", branch: "main" },
    destination: { inCluster: false, namespace: "shop", context: "prod-eu" },
    syncPolicy: {
      automated: { prune: true, selfHeal: true, allowEmpty: false },
      syncOptions: {
        CreateNamespace: false,
        ApplyOutOfSyncOnly: false,
        PruneLast: false,
        PrunePropagationPolicy: "foreground",
        RespectIgnoreDifferences: false,
        ServerSideApply: true,
        Replace: false,
        FailOnSharedResource: false,
        Validate: true,
      },
      retry: { limit: 5, backoff: { duration: 5000, factor: 2, maxDuration: 180000 } },
    },
    ignoreDifferences: [],
    trustedManagers: [],
    notify: [],
    syncWindows: [],
    commands: {
      sync: "write",
      freeze: "write",
      unfreeze: "write",
      approve: "write",
      diff: "read",
      history: "read",
      rollback: "write",
    },
    policy: { namespaces: ["shop"], clusterResources: [], requireSignedCommits: false },
    revisionHistoryLimit: 10,
    pollInterval: 180000,
    production: true,
    ...overrides,
  };
}

/** Commit titles as committers write them: plain, with a table pipe, a mention and HTML. */
const TITLES = ["web: bump to 1.28", "api: retry on 503", "fix | @mallory <b>checkout</b> `x`"];

export function history(n: number): HistoryEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    startedAt: `2024-05-0${(i % 9) + 1}T10:00:00Z`,
    finishedAt: `2024-05-0${(i % 9) + 1}T10:00:42Z`,
    revision: `${String(i + 1)
      .repeat(7)
      .slice(0, 7)}${"0".repeat(33)}`,
    trigger: i % 2 === 0 ? ("push" as const) : ("selfHeal" as const),
    actor: i % 2 === 0 ? "alice" : "syncward",
    result: "Succeeded" as const,
    message: `operation ${i + 1}`,
    // The oldest entry was written before titles were kept; one title is hostile.
    ...(i === 0 ? {} : { title: TITLES[i % TITLES.length]! }),
    counts: { created: 0, configured: 1, pruned: 0, failed: 0 },
  }));
}

export function stateOf(overrides: Partial<EnvironmentState> = {}): EnvironmentState {
  return {
    environment: "prod",
    lastSyncedRevision: SHA,
    syncStatus: "Synced",
    health: "Healthy",
    history: history(3),
    pendingApprovals: [],
    selfHeals: {},
    ...overrides,
  };
}

export function resource(overrides: Partial<ResourceResult> = {}): ResourceResult {
  return {
    group: "apps",
    kind: "Deployment",
    namespace: "shop",
    name: "web",
    status: "Synced",
    action: "configured",
    health: { status: "Healthy" },
    message: "deployment.apps/web configured",
    ...overrides,
  };
}

export function resultOf(overrides: Partial<SyncResult> = {}): SyncResult {
  const resources = overrides.resources ?? [
    resource({
      group: "",
      kind: "ConfigMap",
      name: "web-config",
      action: "unchanged",
      message: "configmap/web-config unchanged",
    }),
    resource(),
    resource({ group: "", kind: "Service", name: "web", action: "created", message: "service/web created" }),
  ];
  const count = (a: string) => resources.filter((r) => r.action === a).length;
  return {
    revision: SHA,
    phase: "Succeeded",
    message: `synced ${resources.length} objects`,
    resources,
    startedAt: "2024-05-01T12:00:00Z",
    finishedAt: "2024-05-01T12:01:05Z",
    totals: {
      created: count("created"),
      configured: count("configured"),
      unchanged: count("unchanged"),
      pruned: count("pruned"),
      failed: count("failed"),
      skipped: count("skipped"),
    },
    writes: count("created") + count("configured") + count("pruned"),
    dryRun: false,
    ...overrides,
  };
}
