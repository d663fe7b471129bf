// One sync operation, a release: attempts with retries (Argo CD's retry), each a short list of
// named steps (release/): which revision, its render, the gate asked with the exact revision and
// render immediately before its first write, the sync; then one history entry.
import { syncWithRetry } from "../engine/retry.ts";
import type { SyncOutcome } from "../engine/sync.ts";
import type { Trigger } from "../state/types.ts";
import type { EnvironmentEffects } from "./effects.ts";
import type { GateDecision } from "./gate-decision.ts";
import { answeredByGate, askGate } from "./release/ask-gate.ts";
import { chooseRevision } from "./release/choose-revision.ts";
import { readState } from "./release/read-state.ts";
import { noteRetry, recordRelease } from "./release/record.ts";
import { type Release, type ReleaseOptions, startRelease } from "./release/release.ts";
import { renderStep } from "./release/render-step.ts";
import { syncStep } from "./release/sync-step.ts";
import { renderSeen } from "./render-binding.ts";

export type { ReleaseOptions } from "./release/release.ts";

/** Releases `head` to the environment: its attempts (each below), then the answer or the history entry. */
export async function syncRevision(
  fx: EnvironmentEffects,
  head: string,
  trigger: Trigger,
  actor: string,
  opts: ReleaseOptions,
): Promise<SyncOutcome & { held?: GateDecision }> {
  const { release, end } = await startRelease(fx, head, trigger, actor, opts);
  const outcome = await syncWithRetry(release.env.syncPolicy.retry, (n) => attempt(release, n), {
    signal: release.signal,
    revision: head,
    dryRun: opts.dryRun,
    onRetry: (n, failed, delay) => noteRetry(release, n, failed, delay),
  }).finally(end);
  if (outcome.dryRun) return outcome;
  // Stopped by the gate before anything was written: nothing to record, the request hears why.
  const held = answeredByGate(release.held, outcome.attempts);
  if (held) return fx.heldBy(held, outcome, opts.path, trigger, actor);
  return recordRelease(release, outcome);
}

/** One attempt: each step either hands on to the next or ends the attempt with its outcome. */
async function attempt(r: Release, n: number): Promise<SyncOutcome> {
  r.unfetched = false;
  r.held = undefined;
  const { revision, moves } = await chooseRevision(r, n);
  if (n > 1) r.lastTrigger = "retry";
  const render = await renderStep(r, revision);
  if ("outcome" in render) return render.outcome;
  const unread = await readState(r, revision);
  if (unread) return unread;
  const seen = renderSeen(render.rendered.objects, r.fx.o.env.destination.namespace);
  // The gate holds a pinned revision to the render its rollback entry applied, as every write.
  const refused = await askGate(r, n, moves, revision, seen);
  if (refused) return refused;
  // What the gate let through: recorded on success, and exactly what this revision's retries apply.
  r.digest = seen;
  r.allowedRender = { revision, rendered: render.rendered };
  return syncStep(r, revision, render.rendered);
}
