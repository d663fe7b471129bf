// Sync windows with Argo CD's semantics (SyncWindows.CanSync in
// pkg/apis/application/v1alpha1/types.go):
//   1. no windows: allowed;
//   2. an active deny window blocks, unless the sync is manual and EVERY active deny window has
//      manualSync;
//   3. otherwise an active allow window allows;
//   4. otherwise, if allow windows exist (all inactive now), blocked, unless the sync is manual and
//      EVERY allow window has manualSync;
//   5. otherwise (only inactive deny windows): allowed.
// A window is active from each start its cron schedule fires (in the window's time zone) for
// `duration`: active at `now` when a start lies in (now - duration, now]. Where syncward differs:
// - the time zone is applied at the evaluated instant (Argo CD applies today's UTC offset of the
//   zone, so around a DST change its windows are an hour off);
// - a window is active at the instant it starts (Argo CD: from just after it).
import type { Cron } from "croner";
import { formatDuration } from "../config/duration.ts";
import { cronFor } from "../config/schedule.ts";
import type { SyncWindow } from "../config/types.ts";

export interface WindowDecision {
  allowed: boolean;
  /** One sentence for people: which windows decided, and until when if known. */
  reason: string;
  /** When blocked: the first instant a sync of the same kind (manual or not) would be allowed. */
  nextOpen?: Date;
}

/** nextOpen is searched this far ahead, over at most this many window starts and ends. */
const SEARCH_HORIZON_MS = 400 * 24 * 3_600_000;
const SEARCH_MAX_STEPS = 2_000;

interface Compiled {
  window: SyncWindow;
  index: number;
  cron: Cron;
}

/** Whether a sync (manual or automated) may run at `now`, and if not, when it next may. */
export function evaluateWindows(windows: readonly SyncWindow[], now: Date, manual: boolean): WindowDecision {
  if (windows.length === 0) return { allowed: true, reason: "no sync windows are configured" };
  const compiled = windows.map((window, index) => ({
    window,
    index,
    cron: cronFor(window.schedule, window.timeZone),
  }));
  const t = now.getTime();
  const decision = decide(compiled, manual, (c) => activeAt(c, t));
  if (decision.allowed) return { allowed: true, reason: decision.reason };
  const search = findNextOpen(compiled, t, manual);
  return "nextOpen" in search
    ? {
        allowed: false,
        reason: `${decision.reason}; next allowed at ${search.nextOpen.toISOString()}`,
        nextOpen: search.nextOpen,
      }
    : {
        allowed: false,
        reason: `${decision.reason}; no opening found before ${search.searchedUntil.toISOString()}`,
      };
}

/**
 * Why self-heal must wait, when it must: an active deny window that says `selfHeal: false`. A
 * deny window holds releases, not remediation (Argo CD blocks both; see docs/semantics.md).
 */
export function selfHealHeldBy(windows: readonly SyncWindow[], now: Date): string | undefined {
  const held = windows.find((w) => w.kind === "deny" && w.selfHeal === false && isWindowActive(w, now));
  return held && `deny window "${held.schedule}" (${held.timeZone}) is active and sets selfHeal: false`;
}

/** Whether `window` is active at `now`. */
export function isWindowActive(window: SyncWindow, now: Date): boolean {
  return activeAt({ window, index: 0, cron: cronFor(window.schedule, window.timeZone) }, now.getTime());
}

/** Active when a start lies in (t - duration, t]: the first start after t - duration is <= t. */
function activeAt(c: Compiled, t: number): boolean {
  const start = c.cron.nextRun(new Date(t - c.window.duration));
  return start !== null && start.getTime() <= t;
}

function decide(
  compiled: readonly Compiled[],
  manual: boolean,
  isActive: (c: Compiled) => boolean,
): { allowed: boolean; reason: string } {
  const active = compiled.filter(isActive);
  const activeDeny = active.filter((c) => c.window.kind === "deny");
  if (activeDeny.length > 0) {
    if (manual && activeDeny.every((c) => c.window.manualSync)) {
      return { allowed: true, reason: `manual sync allowed during ${describe(activeDeny)} (manualSync)` };
    }
    const why = manual ? " (manualSync is not set on every active deny window)" : "";
    return { allowed: false, reason: `blocked by ${describe(activeDeny)}${why}` };
  }
  const allows = compiled.filter((c) => c.window.kind === "allow");
  // The project's allow windows and the repository's are intersected: one of each must be open.
  const owners = new Set(allows.map((c) => c.window.project));
  if (owners.size > 1) {
    for (const owner of owners) {
      const own = decide(
        allows.filter((c) => c.window.project === owner),
        manual,
        isActive,
      );
      if (!own.allowed)
        return { allowed: false, reason: `${own.reason}${owner ? ` (project ${owner})` : ""}` };
    }
    return { allowed: true, reason: `inside ${describe(allows.filter(isActive))}` };
  }
  const activeAllow = active.filter((c) => c.window.kind === "allow");
  if (activeAllow.length > 0) return { allowed: true, reason: `inside ${describe(activeAllow)}` };
  if (allows.length > 0) {
    if (manual && allows.every((c) => c.window.manualSync)) {
      return { allowed: true, reason: `manual sync allowed outside ${describe(allows)} (manualSync)` };
    }
    const why = manual ? " (manualSync is not set on every allow window)" : "";
    return { allowed: false, reason: `outside ${describe(allows)}${why}` };
  }
  return { allowed: true, reason: "no deny window is active" };
}

function describe(list: readonly Compiled[]): string {
  const kind = list[0]?.window.kind ?? "allow";
  const items = list.map(
    ({ window: w, index }) =>
      `#${index} "${w.schedule}" for ${formatDuration(w.duration)}${w.timeZone === "UTC" ? "" : ` (${w.timeZone})`}${w.project ? ` of project ${w.project}` : ""}`,
  );
  return `${kind} window${list.length === 1 ? "" : "s"} ${items.join(", ")}`;
}

/**
 * The first instant after `now` at which a sync is allowed. The decision changes only where a
 * window starts or ends, so those instants are visited in order, keeping count of the open starts
 * of every window, until one allows or the search bounds are reached.
 */
function findNextOpen(
  compiled: readonly Compiled[],
  now: number,
  manual: boolean,
): { nextOpen: Date } | { searchedUntil: Date } {
  const streams = compiled.map((c) => events(c, now));
  const heads = streams.map((s) => s.next());
  const open = compiled.map(() => 0);
  const horizon = now + SEARCH_HORIZON_MS;
  let t = now;
  for (let step = 0; step < SEARCH_MAX_STEPS; step++) {
    t = Number.POSITIVE_INFINITY;
    for (const head of heads) if (!head.done && head.value.at < t) t = head.value.at;
    if (t > horizon) return { searchedUntil: new Date(horizon) };
    for (let i = 0; i < heads.length; i++) {
      for (let head = heads[i]!; !head.done && head.value.at === t; head = heads[i]!) {
        open[i]! += head.value.delta;
        heads[i] = streams[i]!.next();
      }
    }
    if (t > now && decide(compiled, manual, (c) => open[c.index]! > 0).allowed)
      return { nextOpen: new Date(t) };
  }
  return { searchedUntil: new Date(t) };
}

/**
 * Starts (+1) and ends (-1) of `c`'s window in increasing time order, from the first start after
 * `from - duration` (so the starts still open at `from` come first, at or before `from`).
 */
function* events(c: Compiled, from: number): Generator<{ at: number; delta: 1 | -1 }, void> {
  const { duration } = c.window;
  const ends: number[] = []; // ends of the starts seen so far: increasing, like the starts
  let start = c.cron.nextRun(new Date(from - duration));
  while (true) {
    const next = start?.getTime();
    if (ends.length > 0 && (next === undefined || ends[0]! <= next)) {
      yield { at: ends.shift()!, delta: -1 };
      continue;
    }
    if (next === undefined) return;
    yield { at: next, delta: 1 };
    ends.push(next + duration);
    start = c.cron.nextRun(start);
  }
}
