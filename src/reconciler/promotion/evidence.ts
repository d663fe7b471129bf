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
 * newest first). Whether each is on the downstream's branch, and after what it runs, is lineOf's.
 */
export function candidatesOf(upstreams: readonly Upstream[]): string[] {
  const first = upstreams[0];
  if (!first) return [];
  return [...new Set([...first.records].reverse().map((r) => r.revision))];
}

/** Whether commit `ancestor` is `descendant` or one of its ancestors (RevisionSource.contains). */
export type Contains = (ancestor: string, descendant: string) => Promise<boolean>;

/**
 * Whether a downstream at `current` whose branch head is `head` may move to `candidate`:
 * - `branch`: the head does not contain it (a force push dropped it, or it is another branch's);
 * - `back`: it does not contain `current` (older, or another line: going back is a rollback, a
 *   person's decision, however the upstream's records are ordered);
 * - `unknown`: the source cannot tell ancestry (and it is not the head, taken by a downstream that
 *   runs nothing or runs it already), which is no;
 * - `ok`: on the branch, and `current` or after it.
 * Ancestry is asked of the source, which remembers each answer (two commits' never changes).
 */
export async function lineOf(
  candidate: string,
  head: string,
  current: string | undefined,
  contains: Contains | undefined,
): Promise<"ok" | "branch" | "back" | "unknown"> {
  const after = !current || current === candidate;
  if (after && candidate === head) return "ok";
  if (!contains) return "unknown";
  if (!after && !(await contains(current, candidate))) return "back";
  if (candidate !== head && !(await contains(candidate, head))) return "branch";
  return "ok";
}

/** Why a proven commit is not taken, for the wait (lineOf's answer other than `ok`). */
export function offLineText(
  candidate: string,
  line: "branch" | "back" | "unknown",
  current: string | undefined,
  branch: string,
): string {
  if (line === "branch")
    return `${SHORT(candidate)} is proven but is not on ${branch} (its history was rewritten, or the commit is another branch's)`;
  if (line === "back")
    return `${SHORT(candidate)} is proven but does not come after ${SHORT(current ?? "")}, which stays until a newer commit is proven (going back is a rollback)`;
  return `${SHORT(candidate)} is proven, but this source cannot tell whether it is on ${branch}`;
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
  healthyFor: number,
  now: Date,
): Array<{ revision: string; proofs: Proof[] }> {
  return candidatesOf(upstreams)
    .map((revision) => ({ revision, proofs: upstreams.map((u) => proofOf(u, revision, healthyFor, now)) }))
    .filter((c) => c.proofs.every((p) => p.proven));
}

/** A proven candidate on the downstream's line, or why one is not (offLineText). */
export type Lined = { revision: string; proofs: Proof[] } | { off: string };

/**
 * The proven candidates, newest first, each as it lies on the downstream's line (lineOf): one at
 * a time, so a downstream that takes the first asks the source about that one only.
 */
export async function* onLine(
  proven: ReadonlyArray<{ revision: string; proofs: Proof[] }>,
  where: { head: string; current?: string; branch: string },
  contains: Contains | undefined,
): AsyncGenerator<Lined> {
  for (const c of proven) {
    const line = await lineOf(c.revision, where.head, where.current, contains);
    yield line === "ok" ? c : { off: offLineText(c.revision, line, where.current, where.branch) };
  }
}

/**
 * The revision rule: the newest candidate every upstream has proven that lies on the downstream's
 * line (on its branch, not back from `current`); the named checks are asked of it afterwards
 * (promotion.ts). With none, the proofs are those of the head, and why each proven one was not taken.
 */
export async function chooseProven(
  upstreams: readonly Upstream[],
  where: { head: string; current?: string; branch: string },
  contains: Contains | undefined,
  healthyFor: number,
  now: Date,
): Promise<Choice & { off: string[] }> {
  const off: string[] = [];
  for await (const c of onLine(provenCandidates(upstreams, healthyFor, now), where, contains)) {
    if (!("off" in c)) return { ...c, off };
    off.push(c.off);
  }
  return { proofs: upstreams.map((u) => proofOf(u, where.head, healthyFor, now)), off };
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
