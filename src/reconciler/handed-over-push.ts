// Reading the pushes replicas hand each other through an environment's state (HandedOverPush):
// what a state watch event carries, and whether a recorded push may still be waiting for a sync
// when a replica takes the app over.
import { STATE_KEY } from "../state/store.ts";
import type { EnvironmentState, HandedOverPush } from "../state/types.ts";

/** The handed-over push in a state ConfigMap as a watch delivers it, if any. */
export function handedOverPushOf(cm: { data?: Record<string, string> }): HandedOverPush | undefined {
  const text = cm.data?.[STATE_KEY];
  if (!text) return undefined;
  try {
    return (JSON.parse(text) as EnvironmentState).handedOverPush;
  } catch {
    return undefined; // the pass that follows reports a corrupt state
  }
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
