import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { worstHealth } from "../../../src/engine/health/index.ts";
import type { SyncOutcome } from "../../../src/engine/sync.ts";
import { type AppStatus, appStatusAfter } from "../../../src/observability/app-status.ts";
import type { ReconcilerEvent } from "../../../src/reconciler/events.ts";
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
