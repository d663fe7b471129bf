// Automatic rollback, the part that writes: claims the bad release in the state (once, whichever
// replica or pass gets there first: the state store's conflict check decides), then rolls back
// through the same path as `/rollback` (the gate, the recorded render, the pin) and tells the
// world. The decision is auto-rollback.ts's.
import type { SyncOutcome } from "../engine/sync.ts";
import type { StateStore } from "../state/store.ts";
import type { AutoRollbackNote, Trigger } from "../state/types.ts";
import { short } from "../util/short-sha.ts";
import type { AutoRollbackDecision } from "./auto-rollback.ts";
import type { Logger } from "./environment-controller.ts";
import type { Emit } from "./events.ts";
import type { RollbackTarget } from "./pin.ts";

/** Bad releases remembered as decided; an older one coming back is long past its rollback. */
const MARKS_KEPT = 10;

export interface AutoRollbackHost {
  instance: string;
  env: string;
  store: StateStore;
  emit: Emit;
  log: Logger;
  rollback(request: {
    actor: string;
    target: RollbackTarget;
    reason: string;
    trigger: Trigger;
    needsApproval: boolean;
    autoRollback: AutoRollbackNote;
  }): Promise<(SyncOutcome & { held?: unknown }) | { refused: string }>;
}

type Decided = Extract<AutoRollbackDecision, { kind: "refuse" | "rollback" }>;

export async function runAutoRollback(host: AutoRollbackHost, decision: Decided): Promise<void> {
  const planned =
    decision.kind === "refuse"
      ? `not rolled back: ${decision.why}`
      : `rolling back to ${short(decision.to.revision)}`;
  if (!(await claim(host, decision.revision, planned))) return;
  const base = { instance: host.instance, env: host.env, revision: decision.revision } as const;
  if (decision.kind === "refuse") {
    host.log.warn({ instance: host.instance, revision: decision.revision }, `automatic rollback: ${planned}`);
    host.emit({ ...base, type: "autoRollback", refused: decision.why });
    return;
  }
  const result = await host.rollback({
    actor: "syncward",
    target: { historyId: decision.to.id },
    reason: decision.note.reason,
    trigger: "autoRollback",
    needsApproval: false,
    autoRollback: decision.note,
  });
  const refused =
    "refused" in result ? result.refused : result.phase === "Refused" ? result.message : undefined;
  if (refused !== undefined) {
    await mark(host, decision.revision, `not rolled back: ${refused}`);
    host.log.warn(
      { instance: host.instance, revision: decision.revision },
      `automatic rollback refused: ${refused}`,
    );
    host.emit({ ...base, type: "autoRollback", to: decision.to.revision, note: decision.note, refused });
    return;
  }
  const outcome = result as SyncOutcome;
  await mark(host, decision.revision, `rolled back to ${short(decision.to.revision)} (${outcome.phase})`);
  host.log.warn(
    { instance: host.instance, revision: decision.revision, to: decision.to.revision, phase: outcome.phase },
    `automatic rollback: ${decision.note.reason}; pinned at ${short(decision.to.revision)}`,
  );
  host.emit({ ...base, type: "autoRollback", to: decision.to.revision, note: decision.note, outcome });
}

/** Records the bad release as decided; false when someone (another pass, replica) already had. */
async function claim(host: AutoRollbackHost, revision: string, outcome: string): Promise<boolean> {
  let claimed = false;
  await host.store.update(host.instance, (s) => {
    claimed = false; // the mutation runs again on a conflict, on what the other writer left
    if (s.autoRollbacks?.some((m) => m.revision === revision)) return;
    claimed = true;
    s.autoRollbacks = [...(s.autoRollbacks ?? []), { revision, at: new Date().toISOString(), outcome }].slice(
      -MARKS_KEPT,
    );
  });
  return claimed;
}

async function mark(host: AutoRollbackHost, revision: string, outcome: string): Promise<void> {
  await host.store.update(host.instance, (s) => {
    const m = s.autoRollbacks?.find((x) => x.revision === revision);
    if (m) m.outcome = outcome;
  });
}
