// How many previews run at once. The operator's limits (per repository, per installation) cap the
// live ones; a preview beyond them waits, first come first served, and starts when one ends. Pure.

export interface QueuedPreview {
  /** `owner/repo#number:from`, unique per preview. */
  key: string;
  repository: string;
  installation: number;
  phase: "live" | "queued";
  /** When it was asked for (ISO time): the queue's order. */
  requestedAt: string;
}

export interface PreviewLimits {
  maxPerRepository: number;
  maxPerInstallation: number;
}

export type Admission = { start: true } | { start: false; position: number; reason: string };

/** Whether `candidate` may start now, given every other preview; if not, its place in the queue. */
export function admit(
  all: readonly QueuedPreview[],
  candidate: QueuedPreview,
  limits: PreviewLimits,
): Admission {
  const others = all.filter((p) => p.key !== candidate.key);
  const live = others.filter((p) => p.phase === "live");
  const inRepo = live.filter((p) => p.repository === candidate.repository).length;
  const inInstallation = live.filter((p) => p.installation === candidate.installation).length;
  // Earlier waiters go first: a new preview never jumps a queue it shares a limit with.
  const ahead = others.filter(
    (p) =>
      p.phase === "queued" &&
      p.installation === candidate.installation &&
      (p.requestedAt < candidate.requestedAt ||
        (p.requestedAt === candidate.requestedAt && p.key < candidate.key)),
  );
  const repoFull =
    inRepo + ahead.filter((p) => p.repository === candidate.repository).length >= limits.maxPerRepository;
  // An earlier waiter its own repository's limit holds back does not hold back other repositories.
  const installationFull = inInstallation + startingAhead(ahead, live, limits) >= limits.maxPerInstallation;
  if (!repoFull && !installationFull) return { start: true };
  const reason = repoFull
    ? `this repository has ${inRepo} live preview(s), its limit is ${limits.maxPerRepository}`
    : `this installation has ${inInstallation} live preview(s), its limit is ${limits.maxPerInstallation}`;
  return { start: false, position: ahead.length + 1, reason };
}

/** How many of the earlier waiters would start before the candidate: per repository, up to its room. */
function startingAhead(
  ahead: readonly QueuedPreview[],
  live: readonly QueuedPreview[],
  limits: PreviewLimits,
): number {
  let count = 0;
  for (const repository of new Set(ahead.map((p) => p.repository))) {
    const room = limits.maxPerRepository - live.filter((p) => p.repository === repository).length;
    count += Math.max(0, Math.min(room, ahead.filter((p) => p.repository === repository).length));
  }
  return count;
}

/** The queued previews that may start now, in queue order (after one ended, say). */
export function startable(all: readonly QueuedPreview[], limits: PreviewLimits): QueuedPreview[] {
  const order = all.filter((p) => p.phase === "queued").sort(byQueue);
  const state = all.map((p) => ({ ...p }));
  const out: QueuedPreview[] = [];
  for (const next of order) {
    const decision = admit(state, next, limits);
    if (!decision.start) continue;
    out.push(next);
    const entry = state.find((p) => p.key === next.key);
    if (entry) entry.phase = "live";
  }
  return out;
}

/** The queue's order: first asked for first, then by key (two asked for at the same instant). */
export function byQueue(a: QueuedPreview, b: QueuedPreview): number {
  return a.requestedAt.localeCompare(b.requestedAt) || a.key.localeCompare(b.key);
}
