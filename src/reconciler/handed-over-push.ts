// Reading the pushes replicas hand each other through an environment's state (HandedOverPush):
// what a state watch event carries, and whether a recorded push may still be waiting for a sync
// when a replica takes the app over; and the repository events (removed, renamed) handed over alike.
import { STATE_KEY } from "../state/store.ts";
import type { EnvironmentState, HandedOverPush, HandedOverRepositoryEvent, Trigger } from "../state/types.ts";

/**
 * What a replica hands the others in a state ConfigMap as a watch delivers it: a push (and whether
 * it may still wait for a sync, judged on the same state), a repository event.
 */
export function handedOverOf(cm: { data?: Record<string, string> }): {
  push?: HandedOverPush;
  awaiting?: boolean;
  repositoryEvent?: HandedOverRepositoryEvent;
} {
  const text = cm.data?.[STATE_KEY];
  if (!text) return {};
  try {
    const state = JSON.parse(text) as EnvironmentState;
    const push = state.handedOverPush;
    return {
      push,
      ...(push ? { awaiting: awaitsSync(push, state) } : {}),
      repositoryEvent: state.repositoryEvent,
    };
  } catch {
    return {}; // the pass that follows reports a corrupt state
  }
}

/** The handed-over push in a state ConfigMap as a watch delivers it, if any. */
export function handedOverPushOf(cm: { data?: Record<string, string> }): HandedOverPush | undefined {
  return handedOverOf(cm).push;
}

/** Triggers whose syncs repeat a revision already chosen, reading no branch head. */
const REPEATS: ReadonlySet<Trigger> = new Set(["selfHeal", "retry"]);

/**
 * Whether a handed-over push may still be waiting for a sync: its commit is not the last synced
 * one and no sync of another commit started after it was handed over (that one read a newer head,
 * or a person chose another revision: syncing the push's commit now would go back); a self-heal or
 * a retry repeats a revision without reading the branch, so it does not count. A push without a
 * commit (from a source that names none) waits until any sync starts after it.
 *
 * The record's time is the handing replica's clock and a sync's start the holder's: replicas whose
 * clocks disagree by more than the time between a push and the next sync can misjudge a record
 * that outlived its sync. Misjudged as done, nothing is lost (the holder's first pass reads the
 * branch head); a record whose own commit was synced is cleared then (applyOutcome), by no clock.
 */
export function awaitsSync(push: HandedOverPush, state: EnvironmentState): boolean {
  const history = state.history ?? [];
  if (!push.revision) {
    const last = history.at(-1);
    return !last || last.startedAt < push.at;
  }
  if (push.revision === state.lastSyncedRevision) return false;
  return !history.some(
    (h) => !REPEATS.has(h.trigger) && h.revision !== push.revision && h.startedAt > push.at,
  );
}

/**
 * The push a sync of `revision` consumed, cleared from the state: a replica taking the app over
 * later must not take it for a push still waiting, whatever came after it. A config push stays:
 * every replica reads its config again when it sees one, and a watch that was restarted sees only
 * the latest state.
 */
export function clearConsumedPush(state: EnvironmentState, revision: string): void {
  const push = state.handedOverPush;
  if (push?.revision === revision && !push.config) state.handedOverPush = undefined;
}
