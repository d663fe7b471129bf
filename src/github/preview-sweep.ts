// What the periodic sweep does with one recorded preview, from what it read: the pull request's
// state on GitHub, whether the default branch's config still has the preview's template, and its
// time to live. Pure: preview-manager.ts reads, asks this, and acts. An unknown answer (GitHub or
// the config could not be read) never tears anything down: only what is known to be over ends.
import type { PreviewPhase } from "../state/preview-store.ts";

export interface SweepFacts {
  phase: PreviewPhase;
  /** The pull request's state, undefined when GitHub could not be asked. */
  pullState?: "open" | "closed";
  /** Whether the repository's config has a template for the preview's environment; undefined: unknown. */
  templateExists?: boolean;
  ttlMs?: number;
  lastMovedAt: string;
  /** A step for this preview is running now (a webhook's, or a teardown). */
  busy: boolean;
}

export type SweepAction =
  | { action: "keep" }
  | { action: "teardown"; why: string }
  /** A teardown that stopped half way (GitHub or the API server failed a step): take it up again. */
  | { action: "resume" };

export function sweepAction(facts: SweepFacts, now = Date.now()): SweepAction {
  if (facts.phase === "tearingDown") return facts.busy ? { action: "keep" } : { action: "resume" };
  // The close webhook's words: whichever notices first, the comment says the same.
  if (facts.pullState === "closed") return { action: "teardown", why: "the pull request closed" };
  if (facts.templateExists === false)
    return { action: "teardown", why: "its template is no longer in `.github/syncward.yml`" };
  const moved = Date.parse(facts.lastMovedAt);
  if (facts.ttlMs !== undefined && Number.isFinite(moved) && now - moved > facts.ttlMs)
    return { action: "teardown", why: "its time to live passed since the pull request last moved" };
  return { action: "keep" };
}
