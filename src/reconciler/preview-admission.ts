// Whether a queued preview starts now, decided one at a time per installation across every
// replica, so the operator's per-repository and per-installation limits hold however many
// replicas start previews at once (and however their clocks disagree).
//
// A decision reads the installation's admission ticket (a ConfigMap in the state namespace), then
// the preview records, decides with the queue's rules (preview-queue.ts), writes the preview's
// claim (its record, marked admitted: from then on it holds a place in the limits), and last
// rewrites the ticket with the resourceVersion it read. Of two decisions that read the same
// ticket only one rewrites it; the other gets a 409, reads again (the winner's claim is in the
// records by then: it was written before the winner's ticket) and decides again. A decision that
// rewrote the ticket therefore read every claim committed before it, and no two committed claims
// can both have taken the last place.
//
// Why a ticket and not a Lease held around the decision (lease.ts): the records already are
// written this way (a put names the resourceVersion it read), so the ticket is one more such
// write. Nothing is held: a replica that dies mid-decision blocks no one for a lease's duration,
// no clocks are compared, no contender waits and polls for a holder to let go, and a decision
// that stalls (a paused process, a slow API server) cannot outlive a lease and write after
// another replica took it: its ticket write simply fails. It needs only what the state Role
// already grants (configmaps get, create, update).
//
// Failing closed: a claim whose ticket write failed stays written until the next decision about
// that preview keeps it or gives it back, so meanwhile it counts against the limits; an API
// error leaves the preview queued (the sweep and the next teardown decide again), never started
// without its turn.
import { randomBytes } from "node:crypto";
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { PreviewConflictError, type PreviewRecord, type StoredPreview } from "../state/preview-store.ts";
import { MANAGED_BY_LABEL } from "../state/store.ts";
import type { Admission, QueuedPreview } from "./preview-queue.ts";

export const PREVIEW_ADMISSION_LABEL = "syncward.dev/preview-admission";

/** The admission ticket of an installation as read: what its rewrite must name. */
export interface AdmissionTicket {
  installation: number;
  /** Absent when there is none yet (the first decision creates it). */
  resourceVersion?: string;
  /** Decisions that started a preview so far (for people reading it). */
  turns: number;
}

export interface AdmissionTickets {
  read(installation: number): Promise<AdmissionTicket>;
  /** Rewrites the ticket as read; false when another decision rewrote (or created) it since. */
  commit(ticket: AdmissionTicket, key: string): Promise<boolean>;
}

/** What a decision needs of the preview records (PreviewStore). */
export interface AdmissionRecords {
  get(key: string): Promise<StoredPreview | undefined>;
  list(): Promise<StoredPreview[]>;
  put(record: PreviewRecord, resourceVersion?: string): Promise<StoredPreview>;
}

export function admissionTicketName(installation: number): string {
  return `syncward-preview-admission-${installation}`;
}

/** The tickets as ConfigMaps `syncward-preview-admission-<installation>` in the state namespace. */
export class PreviewAdmissionTickets implements AdmissionTickets {
  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
  ) {}

  async read(installation: number): Promise<AdmissionTicket> {
    const cm = await this.client.get("v1", "ConfigMap", this.namespace, admissionTicketName(installation));
    const turns = Number((cm?.data as Record<string, string> | undefined)?.turns ?? 0);
    return {
      installation,
      ...(cm ? { resourceVersion: cm.metadata.resourceVersion ?? "" } : {}),
      turns: Number.isSafeInteger(turns) ? turns : 0,
    };
  }

  async commit(ticket: AdmissionTicket, key: string): Promise<boolean> {
    const cm: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: admissionTicketName(ticket.installation),
        namespace: this.namespace,
        labels: { [MANAGED_BY_LABEL]: "syncward", [PREVIEW_ADMISSION_LABEL]: "true" },
        ...(ticket.resourceVersion !== undefined ? { resourceVersion: ticket.resourceVersion } : {}),
      },
      data: {
        installation: String(ticket.installation),
        turns: String(ticket.turns + 1),
        last: key,
        at: new Date().toISOString(),
      },
    };
    try {
      if (ticket.resourceVersion === undefined) await this.client.create(cm);
      else await this.client.replace(cm);
      return true;
    } catch (err) {
      // Rewritten since it was read, or created by another decision first.
      if (err instanceof KubeApiError && err.status === 409) return false;
      throw err;
    }
  }
}

/**
 * A record as the queue counts it: a queued preview that a decision admitted holds its place
 * (counts as live) from its claim on, while its namespace is made.
 */
export function queuedOf(record: PreviewRecord): QueuedPreview {
  return {
    key: record.key,
    repository: `${record.repository.owner}/${record.repository.repo}`.toLowerCase(),
    installation: record.installation,
    phase: record.phase === "queued" && !record.admitted ? "queued" : "live",
    requestedAt: record.requestedAt,
  };
}

/**
 * The previews as a decision about `key` sees them: every record as the queue counts it, and the
 * candidate itself waiting, whatever an earlier decision left in its record (an admitted start
 * that stopped short is decided again like any waiter).
 */
export function admissionView(records: readonly PreviewRecord[], key: string): QueuedPreview[] {
  return records.map((r) => (r.key === key ? { ...queuedOf(r), phase: "queued" as const } : queuedOf(r)));
}

/**
 * How long a claimed start (an admitted record still queued) is taken to be under way on the
 * replica that claimed it: its namespace is being made. Until then no other decision touches it
 * (neither a second start nor giving its place back); after it, the start is taken to have died
 * with its replica (a start that fails gives its place back itself), and the next decision about
 * the preview keeps the place or gives it back. Far longer than a start takes, and than clocks
 * of two replicas differ.
 */
export const START_UNDER_WAY_MS = 5 * 60_000;

/** Whether `record` is a start another decision claimed less than START_UNDER_WAY_MS ago. Pure. */
export function startUnderWay(record: PreviewRecord, now: number): boolean {
  if (record.phase !== "queued" || !record.admitted) return false;
  const at = Date.parse(record.admitted);
  // An admission without a readable time (written by hand) is not waited for.
  return Number.isFinite(at) && now - at < START_UNDER_WAY_MS;
}

/** The record as a start claims it: its token (kept if it has one), one more launch, admitted now. */
export function claimed(record: PreviewRecord, now: number): PreviewRecord {
  return {
    ...record,
    claim: record.claim ?? randomBytes(24).toString("base64url"),
    launches: (record.launches ?? 0) + 1,
    admitted: new Date(now).toISOString(),
  };
}

/** The record without its place in the limits: still queued, for the next decision. */
export function unadmitted(record: PreviewRecord): PreviewRecord {
  const { admitted: _place, ...rest } = record;
  return rest;
}

/**
 * Gives back the place a start claimed and did not use (its namespace could not be made, it
 * failed), if the record is still as that start wrote it; never one another start wrote since.
 */
export async function releaseClaim(records: AdmissionRecords, stored: StoredPreview): Promise<void> {
  if (stored.record.phase !== "queued" || !stored.record.admitted) return;
  try {
    await records.put(unadmitted(stored.record), stored.resourceVersion);
  } catch (err) {
    if (!(err instanceof PreviewConflictError)) throw err;
  }
}

/** Whether `record` carries the claim `ours` wrote (other fields may have changed since). */
function sameClaim(record: PreviewRecord, ours: PreviewRecord | undefined): boolean {
  return ours !== undefined && record.admitted === ours.admitted && record.launches === ours.launches;
}

export type AdmissionOutcome =
  /** Its turn: the claim is written as `stored`; the start goes on from it. */
  | { kind: "start"; stored: StoredPreview }
  /** It waits: `stored` is the record as it is now (holding no place). */
  | { kind: "queued"; stored: StoredPreview; position: number; reason: string }
  /**
   * Not this decision's: gone, no longer queued, its start under way on another replica, or
   * another start of it wrote its record first.
   */
  | { kind: "left" };

/** Decisions in a row that may lose their ticket to others before this one gives up (queued still). */
const ATTEMPTS = 8;

/**
 * Decides whether the queued preview `key` starts now, one decision at a time per installation
 * (see the top of this file). `decide` is the queue's rule, given every preview as the limits
 * count it (the candidate waiting). Throws on an API error, or when others kept taking the turn:
 * the preview stays queued.
 */
export async function admitPreview(
  records: AdmissionRecords,
  tickets: AdmissionTickets,
  key: string,
  decide: (all: QueuedPreview[], candidate: QueuedPreview) => Admission,
  now: () => number = Date.now,
): Promise<AdmissionOutcome> {
  /** The claim this call wrote last (a lost turn leaves it in the record until decided again). */
  let ours: StoredPreview | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await records.get(key);
    if (current?.record.phase !== "queued") return { kind: "left" };
    if (!sameClaim(current.record, ours?.record) && startUnderWay(current.record, now()))
      return { kind: "left" };
    // The ticket before the records: a decision committed after this read fails our rewrite.
    const ticket = await tickets.read(current.record.installation);
    const all = admissionView(
      (await records.list()).map((s) => s.record),
      key,
    );
    const candidate = all.find((p) => p.key === key) ?? { ...queuedOf(current.record), phase: "queued" };
    const decision = decide(all, candidate);
    if (!decision.start) {
      const { position, reason } = decision;
      if (!current.record.admitted) return { kind: "queued", stored: current, position, reason };
      // A place it held without starting (a start that died, a turn lost to another decision) is
      // given back: freeing a place needs no turn.
      try {
        const stored = await records.put(unadmitted(current.record), current.resourceVersion);
        return { kind: "queued", stored, position, reason };
      } catch (err) {
        if (err instanceof PreviewConflictError) continue;
        throw err;
      }
    }
    try {
      ours = await records.put(claimed(current.record, now()), current.resourceVersion);
    } catch (err) {
      // Another start of this preview (two teardowns, two replicas), or a stop, wrote it first.
      // After a lost turn it may be a push that wrote over our claim: read it again.
      if (err instanceof PreviewConflictError) {
        if (ours) continue;
        return { kind: "left" };
      }
      throw err;
    }
    const committed = await tickets.commit(ticket, key).catch(async (err: Error) => {
      // Not known to be our turn: the place goes back (if the API server takes even that).
      await releaseClaim(records, ours as StoredPreview).catch(() => undefined);
      throw err;
    });
    if (committed) return { kind: "start", stored: ours };
    // Another decision of this installation committed after our read: ours may have missed its
    // claim. Our claim stays (it counts against the limits) until we decide again, now.
  }
  // Never started without its turn: the claim left from the last lost turn is given back.
  if (ours) await releaseClaim(records, ours);
  throw new Error(
    `the admission of preview ${key} lost its turn ${ATTEMPTS} times in a row to other previews' starts; it stays queued`,
  );
}
