import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { worstHealth } from "../../../src/engine/health/index.ts";
import type { SyncOutcome } from "../../../src/engine/sync.ts";
import { type AppStatus, appStatusAfter, statusOfState } from "../../../src/observability/app-status.ts";
import type { ReconcilerEvent } from "../../../src/reconciler/events.ts";
import { healthAfter } from "../../../src/state/recorded-health.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";

const base = { instance: "shop.prod", env: "prod", revision: "a".repeat(40) };
const worst = (list: Parameters<typeof worstHealth>[0]) => worstHealth(list)?.status;

function synced(phase: SyncOutcome["phase"], health: string[], dryRun = false): ReconcilerEvent {
  const outcome = {
    phase,
    dryRun,
    resources: health.map((status) => ({ health: { status } })),
  } as unknown as SyncOutcome;
  return { ...base, type: "synced", trigger: "push", actor: "a", outcome, entry: {} as HistoryEntry };
}

describe("appStatusAfter", () => {
  const healthy: AppStatus = { sync: "Synced", health: "Healthy" };
  const table: Array<[string, AppStatus | undefined, ReconcilerEvent, AppStatus]> = [
    [
      "first sync succeeds",
      undefined,
      synced("Succeeded", ["Healthy", "Progressing"]),
      { sync: "Synced", health: "Progressing" },
    ],
    ["a sync with no resource health", undefined, synced("Succeeded", []), healthy],
    ["a failed sync", healthy, synced("Failed", ["Degraded"]), { sync: "OutOfSync", health: "Degraded" }],
    ["a refused sync changes nothing", healthy, synced("Refused", []), healthy],
    ["a dry run changes nothing", healthy, synced("Succeeded", ["Degraded"], true), healthy],
    [
      "drift",
      healthy,
      { ...base, type: "outOfSync", drifted: ["x"], requiresPruning: [], reason: "" },
      { sync: "OutOfSync", health: "Healthy" },
    ],
    [
      "a render error",
      healthy,
      { ...base, type: "renderError", message: "bad", problems: [] },
      { sync: "Unknown", health: "Healthy" },
    ],
    ["stuck", healthy, { ...base, type: "stuck", reason: "boom" }, { sync: "Synced", health: "Degraded" }],
    ["waiting keeps it", healthy, { ...base, type: "waiting", reason: "window" }, healthy],
    [
      "nothing known yet",
      undefined,
      { ...base, type: "waiting", reason: "window" },
      { sync: "Unknown", health: "Unknown" },
    ],
  ];
  for (const [name, before, event, expected] of table) {
    it(name, () => assert.deepEqual(appStatusAfter(before, event, worst), expected));
  }
});

describe("statusOfState (the gauge from stored state)", () => {
  const table: Array<[string, Parameters<typeof statusOfState>[0], AppStatus]> = [
    ["a fresh state", { syncStatus: "Unknown" }, { sync: "Unknown", health: "Unknown" }],
    [
      "synced and healthy",
      { syncStatus: "Synced", health: "Healthy" },
      { sync: "Synced", health: "Healthy" },
    ],
    [
      "out of sync, health not yet recorded",
      { syncStatus: "OutOfSync" },
      { sync: "OutOfSync", health: "Unknown" },
    ],
    [
      "stuck after retries is Degraded, as the stuck event makes it",
      { syncStatus: "OutOfSync", health: "Healthy", stuck: { revision: "r", reason: "x", since: "t" } },
      { sync: "OutOfSync", health: "Degraded" },
    ],
    [
      "pinned by a rollback",
      {
        syncStatus: "Synced",
        health: "Healthy",
        pin: { revision: "r", historyId: 3, by: "alice", at: "t", reason: "" },
      },
      { sync: "Synced", health: "Healthy", pinned: true },
    ],
  ];
  for (const [name, state, expected] of table) {
    it(name, () => assert.deepEqual(statusOfState(state), expected));
  }
});

describe("healthAfter (the health a sync records in state)", () => {
  const outcome = (phase: SyncOutcome["phase"], health: string[], dryRun = false) =>
    ({
      phase,
      dryRun,
      resources: health.map((status) => ({ health: { status } })),
    }) as unknown as SyncOutcome;
  const table: Array<[string, string | undefined, SyncOutcome, string | undefined]> = [
    [
      "the worst resource health",
      undefined,
      outcome("Succeeded", ["Healthy", "Degraded", "Progressing"]),
      "Degraded",
    ],
    ["Healthy for a success with nothing to assess", "Degraded", outcome("Succeeded", []), "Healthy"],
    ["a failure with nothing to assess keeps it", "Progressing", outcome("Error", []), "Progressing"],
    ["a dry run keeps it", "Healthy", outcome("Succeeded", ["Degraded"], true), "Healthy"],
    ["a refusal keeps it", "Healthy", outcome("Refused", ["Missing"]), "Healthy"],
  ];
  for (const [name, before, o, expected] of table) {
    it(name, () => assert.equal(healthAfter(before, o), expected));
  }
});
