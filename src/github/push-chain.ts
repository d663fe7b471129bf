// Who pushed each revision of a range when GitHub's repository activity cannot say (403, a list
// that lags or is cut short): the push webhooks syncward recorded (state.recentPushes). A push
// moved the branch from `before` to `after`, and its pusher brought in every commit `after` holds
// and `before` does not; so when the recorded pushes lead from the pending revision back to the
// last synced one, their pushers between them brought in the whole range. Where the chain breaks,
// a push syncward never saw (a lost webhook, one older than those kept) brought in commits whose
// pusher nobody knows.
import type { RecordedPush } from "../state/types.ts";

/**
 * The revision where the recorded pushes stop leading back from `head` to `base` (no recorded
 * push moved the branch to it, or it loops), or undefined when they reach `base`.
 */
export function chainBreak(pushes: readonly RecordedPush[], base: string, head: string): string | undefined {
  const byAfter = new Map(pushes.map((p) => [p.after, p]));
  const seen = new Set<string>();
  for (let at = head; at !== base; ) {
    const push = byAfter.get(at);
    if (push?.before === undefined || seen.has(at)) return at;
    seen.add(at);
    at = push.before;
  }
  return undefined;
}
