// Reading the pushes replicas hand each other through an environment's state (HandedOverPush):
// what a state watch event carries, and whether a recorded push may still be waiting for a sync
// when a replica takes the app over; and the repository events (removed, renamed) handed over alike.
import { STATE_KEY } from "../state/store.ts";
import type { EnvironmentState, HandedOverPush, HandedOverRepositoryEvent } from "../state/types.ts";

/** What a replica hands the others in a state ConfigMap as a watch delivers it: a push, a repository event. */
export function handedOverOf(cm: { data?: Record<string, string> }): {
  push?: HandedOverPush;
  repositoryEvent?: HandedOverRepositoryEvent;
} {
  const text = cm.data?.[STATE_KEY];
  if (!text) return {};
  try {
    const state = JSON.parse(text) as EnvironmentState;
    return { push: state.handedOverPush, repositoryEvent: state.repositoryEvent };
  } catch {
    return {}; // the pass that follows reports a corrupt state
  }
}

/** The handed-over push in a state ConfigMap as a watch delivers it, if any. */
export function handedOverPushOf(cm: { data?: Record<string, string> }): HandedOverPush | undefined {
  return handedOverOf(cm).push;
}

/**
 * Whether a handed-over push may still be waiting for a sync: its commit is not the last synced
 * one, or (a push without a commit, from a source that names none) nothing started after it.
 */
export function awaitsSync(push: HandedOverPush, state: EnvironmentState): boolean {
  if (push.revision) return push.revision !== state.lastSyncedRevision;
  const last = state.history.at(-1);
  return !last || last.startedAt < push.at;
}
