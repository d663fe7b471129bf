// What an upstream environment's state proves about a commit, and which commit a downstream may
// take: pure functions of the upstreams' health records (src/state/health-records.ts), the time
// and `promotion.healthyFor`. The glue that reads the states and the checks is promotion.ts.
import { formatDuration } from "../../config/duration.ts";
import type { HealthRecord } from "../../state/health-records.ts";

const SHORT = (sha: string) => sha.slice(0, 7);

/** One upstream as a downstream sees it: its name, branch and the records of its state. */
export interface Upstream {
  name: string;
  branch: string;
  records: readonly HealthRecord[];
  /** The commit it is synced at now (lastSyncedRevision), if any. */
  current?: string;
}

/** What one upstream proves about one commit. */
export interface Proof {
  upstream: string;
  proven: boolean;
  /** "staging: Healthy for 34m at this commit", "staging: Healthy for 40s of 2m at this commit". */
  text: string;
}

/** Minutes for anything a minute or longer, as people read a wait; seconds below. */
export function readableSpan(ms: number): string {
  if (ms >= 60_000) return formatDuration(Math.floor(ms / 60_000) * 60_000);
  return formatDuration(Math.floor(ms / 1_000) * 1_000);
}

/**
 * Whether `upstream` has proven `revision`: its latest record of it lasts, or lasted until the
 * upstream moved on, at least `healthyFor`. A record that ended in another health (Degraded, say)
 * proves nothing, however long it lasted before: the commit is proven again only by a new record.
 */
export function proofOf(upstream: Upstream, revision: string, healthyFor: number, now: Date): Proof {
  const record = upstream.records.findLast((r) => r.revision === revision);
  const name = upstream.name;
  if (!record) {
    const where = upstream.current ? ` (it runs ${SHORT(upstream.current)})` : "";
    return { upstream: name, proven: false, text: `${name}: has not been Healthy at this commit${where}` };
  }
  const start = Date.parse(record.since);
  if (record.until !== undefined && record.ended !== "moved")
    return {
      upstream: name,
      proven: false,
      text: `${name}: turned ${record.ended} at this commit after ${readableSpan(Date.parse(record.until) - start)} Healthy`,
    };
  const span = (record.until === undefined ? now.getTime() : Date.parse(record.until)) - start;
  const proven = span >= healthyFor;
  const was = record.until === undefined ? "Healthy" : "was Healthy";
  const until = record.until === undefined ? "" : " before it moved on";
  return {
    upstream: name,
    proven,
    text: proven
      ? `${name}: ${was} for ${readableSpan(span)} at this commit${until}`
      : `${name}: ${was} for ${readableSpan(span)} of ${formatDuration(healthyFor)} at this commit${until}`,
  };
}

/**
 * The commits a downstream may consider, newest first: those the first upstream ran (its records,
 * newest first), on the downstream's branch. A commit of another branch qualifies only when it is
 * the downstream's own head: syncward cannot tell whether a commit is on a branch it did not come from.
 */
export function candidatesOf(upstreams: readonly Upstream[], branch: string, head: string): string[] {
  const first = upstreams[0];
  if (!first) return [];
  const sameBranch = upstreams.every((u) => u.branch === branch);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of [...first.records].reverse()) {
    if (seen.has(r.revision)) continue;
    seen.add(r.revision);
    if (sameBranch || r.revision === head) out.push(r.revision);
  }
  return out;
}

/**
 * Whether the downstream, at `current`, would move back to the older `chosen`: it never does (a
 * commit it took stays until a newer one is proven, even when the upstream's proof of it ended
 * since; going back is a rollback, a person's decision). Older means later in `candidates`.
 */
export function movesBack(
  candidates: readonly string[],
  chosen: string,
  current: string | undefined,
): boolean {
  if (!current || current === chosen) return false;
  const at = candidates.indexOf(current);
  return at >= 0 && at < candidates.indexOf(chosen);
}

/** The outcome of the revision rule for one downstream. */
export interface Choice {
  /** The newest commit every upstream proved; undefined: none, the downstream holds. */
  revision?: string;
  /** For `revision` (or, when none, for the newest candidate or the head): each upstream's proof. */
  proofs: Proof[];
}

/** The candidates every upstream has proven, newest first, each with its proofs. */
export function provenCandidates(
  upstreams: readonly Upstream[],
  branch: string,
  head: string,
  healthyFor: number,
  now: Date,
): Array<{ revision: string; proofs: Proof[] }> {
  return candidatesOf(upstreams, branch, head)
    .map((revision) => ({ revision, proofs: upstreams.map((u) => proofOf(u, revision, healthyFor, now)) }))
    .filter((c) => c.proofs.every((p) => p.proven));
}

/**
 * The revision rule: the newest candidate every upstream has proven (the named checks are asked
 * of it afterwards, promotion.ts). With none, the proofs are those of the head: what it waits for.
 */
export function chooseProven(
  upstreams: readonly Upstream[],
  branch: string,
  head: string,
  healthyFor: number,
  now: Date,
): Choice {
  const newest = provenCandidates(upstreams, branch, head, healthyFor, now)[0];
  return newest ?? { proofs: upstreams.map((u) => proofOf(u, head, healthyFor, now)) };
}

/**
 * When the upstream's current stretch of health will have lasted `healthyFor`: the moment its
 * commit becomes proven, if that is still to come. Undefined when nothing will be proven by time
 * alone (not Healthy, or already proven).
 */
export function provenAt(upstream: Upstream, healthyFor: number, now: Date): Date | undefined {
  const open = upstream.records.at(-1);
  if (!open || open.until !== undefined) return undefined;
  const at = Date.parse(open.since) + healthyFor;
  return at > now.getTime() ? new Date(at) : undefined;
}

/** The earliest moment any upstream proves a commit: when the downstream should look again. */
export function nextWake(upstreams: readonly Upstream[], healthyFor: number, now: Date): Date | undefined {
  const times = upstreams
    .map((u) => provenAt(u, healthyFor, now)?.getTime())
    .filter((t): t is number => t !== undefined);
  return times.length > 0 ? new Date(Math.min(...times)) : undefined;
}
