// A coordination.k8s.io/v1 Lease as a lock, so two replicas never operate on one environment (or,
// with one "syncward-leader" lease, on anything) at once. Semantics follow client-go's
// tools/leaderelection:
// - acquire when the Lease is absent (create), held by us, released (empty holder), or expired;
// - every write is an update with the resourceVersion just read, so of two contenders exactly one
//   wins and the other gets a 409 (and false);
// - expiry is judged on our own clock from when we first observed the current record, as
//   client-go does, so clock skew between replicas cannot make us take a live lease early; we
//   additionally require the holder's own `renewTime + leaseDurationSeconds` to have passed;
// - taking the lease from another holder sets acquireTime and increments leaseTransitions;
// - release hands the lease back (empty holder, leaseDurationSeconds 1) so another replica can
//   take it at once instead of waiting for it to expire.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { ensureNamespace, sanitizeName, shortHash } from "./store.ts";

const LEASE_API = "coordination.k8s.io/v1";

export interface LeaseLockOptions {
  /** How long the lease stays ours without a renewal (default 15). */
  leaseDurationSeconds?: number;
  /** How often `start` renews (default a third of the duration). */
  renewEveryMs?: number;
  /**
   * Shared record of when each lease version was first seen in this process, so a lease another
   * part of the process has watched going unrenewed (the shard's periodic listing) is judged
   * expired without this lock first watching it for a whole duration itself.
   */
  sightings?: LeaseSightings;
  /** Labels the Lease is created with, beside `app.kubernetes.io/managed-by: syncward`. */
  labels?: Record<string, string>;
  /** Owners of the Lease when created (a replica's membership Lease belongs to its Pod). */
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
}

/**
 * When (our clock) each version of a Lease was first seen. A Lease is judged expired only after it
 * has gone unchanged for its duration as we watched it (client-go's rule), so every reader in the
 * process that saw a version counts: the earliest sighting wins.
 */
export class LeaseSightings {
  private readonly seen = new Map<string, { resourceVersion: string; at: number }>();

  /** Records a sighting of `name` at `resourceVersion`; returns when that version was first seen. */
  see(name: string, resourceVersion: string, now: number = Date.now()): number {
    const known = this.seen.get(name);
    if (known && known.resourceVersion === resourceVersion) return known.at;
    this.seen.set(name, { resourceVersion, at: now });
    return now;
  }

  /** Forgets leases not in `names` (deleted ones), so the record does not grow without bound. */
  keepOnly(names: Set<string>): void {
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
  }
}

/**
 * Whether a Lease record has gone unrenewed for its duration, both by our clock (from when its
 * current version was first seen) and by the holder's (`renewTime`); a lease without a holder is
 * free whatever the times say.
 */
export function leaseExpired(
  spec: { holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | null },
  firstSeenAt: number,
  now: number,
  defaultDurationSeconds = 15,
): boolean {
  if (!spec.holderIdentity) return true;
  const durationMs = (spec.leaseDurationSeconds ?? defaultDurationSeconds) * 1000;
  const renewedAt = parseMicroTime(spec.renewTime);
  const byOurClock = firstSeenAt + durationMs <= now;
  const byHolderClock = Number.isNaN(renewedAt) || renewedAt + durationMs <= now;
  return byOurClock && byHolderClock;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
  [field: string]: unknown;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** The Lease name for one environment instance: `syncward-payments-config-dev-<hash>`. */
export function leaseNameFor(instance: string): string {
  const readable = sanitizeName(instance, 40);
  return readable ? `syncward-${readable}-${shortHash(instance)}` : `syncward-${shortHash(instance)}`;
}

/** RFC 3339 with microseconds, as the API server writes a MicroTime: `2026-11-29T18:20:00.123456Z`. */
export function microTime(epochMs: number = Date.now()): string {
  const ms = Math.floor(epochMs);
  const micros = Math.min(999, Math.floor((epochMs - ms) * 1000));
  return new Date(ms).toISOString().replace(/Z$/, `${String(micros).padStart(3, "0")}Z`);
}

/** Milliseconds since the epoch of a MicroTime (or plain RFC 3339) string; NaN when absent or unreadable. */
export function parseMicroTime(text: string | null | undefined): number {
  if (!text) return Number.NaN;
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return Number.NaN;
  const whole = Date.parse(`${m[1]}${m[3]}`);
  const fraction = m[2] ? Number(`0.${m[2]}`) * 1000 : 0;
  return whole + fraction;
}

function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}

export class LeaseLock {
  readonly leaseDurationSeconds: number;
  readonly renewEveryMs: number;
  /** resourceVersion of the record we last saw, and when (our clock) we first saw it. */
  private observed?: { resourceVersion: string; at: number };
  /** When (our clock) we sent the last write that made or kept the lease ours; undefined when not ours. */
  private heldSince?: number;
  /** The record as the API server returned our last write of it (what a renewal updates). */
  private written?: Lease;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;
  private readonly sightings: LeaseSightings;

  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
    readonly identity: string,
    private readonly options: LeaseLockOptions = {},
  ) {
    if (!identity) throw new Error("a LeaseLock needs a non-empty identity (an empty holder means released)");
    this.leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
    if (!(this.leaseDurationSeconds >= 1) || !Number.isInteger(this.leaseDurationSeconds)) {
      throw new Error(
        `leaseDurationSeconds must be a whole number of seconds >= 1, not ${options.leaseDurationSeconds}`,
      );
    }
    this.renewEveryMs = options.renewEveryMs ?? Math.floor((this.leaseDurationSeconds * 1000) / 3);
    this.sightings = options.sightings ?? new LeaseSightings();
  }

  /**
   * True while we hold the lease: the last acquire or renewal succeeded and, by our clock, less than
   * a lease duration has passed since we sent it. After that another replica may take it.
   */
  get held(): boolean {
    return this.heldSince !== undefined && Date.now() - this.heldSince < this.leaseDurationSeconds * 1000;
  }

  /** `start` is renewing the lease in the background (until stopped or lost). */
  get renewing(): boolean {
    return !this.stopped;
  }

  /** Takes the lease if it is free, released, expired or already ours; false when someone else holds it. */
  async tryAcquire(): Promise<boolean> {
    const sentAt = Date.now();
    const lease = await this.read();
    if (!lease) return this.create(sentAt);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    // Ours already (say, a background renewal raced us): renewing retries a spurious conflict.
    if (holder === this.identity) return (await this.write(lease, sentAt, false)) || this.renew();
    if (holder !== "" && !this.expired(lease, sentAt)) {
      this.heldSince = undefined;
      return false;
    }
    return this.write(lease, sentAt, true);
  }

  /**
   * Extends our hold; false (and no longer held) when the lease is gone or someone else holds it.
   * A conflicting write by someone who did not take the lease (say, a label edit) is retried.
   */
  async renew(): Promise<boolean> {
    // One request where nobody else wrote since our last write: the update carries that write's
    // resourceVersion, so it succeeds only on the record as we left it (still ours). Anything else
    // (a 409: someone wrote; a 404: it was deleted) is read and decided below, as before.
    const last = this.written;
    if (last && this.heldSince !== undefined) {
      const sentAt = Date.now();
      if (await this.writeIfUnchanged(last, sentAt)) return true;
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const sentAt = Date.now();
      const lease = await this.read();
      if (!lease || (lease.spec?.holderIdentity ?? "") !== this.identity) break;
      if (await this.write(lease, sentAt, false)) return true;
    }
    this.heldSince = undefined;
    return false;
  }

  /**
   * Hands the lease back if we hold it, so another replica can take it at once. A conflicting write
   * by someone who did not take the lease (another replica marking it with its repository) is read
   * again and retried: given up, the lease would stay ours, unrenewed, for a whole lease duration.
   */
  async release(): Promise<void> {
    const wasHeld = this.heldSince !== undefined;
    this.heldSince = undefined;
    this.written = undefined;
    if (!wasHeld) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      const lease = await this.read();
      // Gone, or someone took it meanwhile: it is not ours to release any more.
      if (!lease || (lease.spec?.holderIdentity ?? "") !== this.identity) return;
      const now = microTime();
      try {
        await this.client.replace({
          ...lease,
          apiVersion: LEASE_API,
          kind: "Lease",
          spec: {
            ...lease.spec,
            holderIdentity: "",
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
          },
        });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    throw new Error(
      `could not release lease ${this.namespace}/${this.name}: it kept changing; it expires unrenewed`,
    );
  }

  /**
   * Renews every `renewEveryMs` in the background. `onLost` is called once, when a renewal finds the
   * lease taken by someone else, or when renewals keep failing (API errors) until the lease would have
   * expired; renewing stops then. Call after a successful `tryAcquire`.
   */
  start(onLost: () => void): void {
    if (!this.stopped) throw new Error(`lease ${this.namespace}/${this.name} is already being renewed`);
    this.stopped = false;
    const lost = () => {
      this.stopped = true;
      this.heldSince = undefined;
      onLost();
    };
    const tick = async () => {
      try {
        if (!(await this.renew())) {
          if (!this.stopped) lost();
          return;
        }
      } catch {
        // API or network trouble: keep trying while the lease can still be ours.
        if (!this.held) {
          if (!this.stopped) lost();
          return;
        }
      }
      if (!this.stopped) schedule();
    };
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.running = tick().finally(() => {
          this.running = undefined;
        });
      }, this.renewEveryMs);
      this.timer.unref();
    };
    schedule();
  }

  /** Stops renewing and releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await this.release();
  }

  // ---- internals ----

  private async read(): Promise<Lease | undefined> {
    const lease = (await this.client.get(LEASE_API, "Lease", this.namespace, this.name)) as Lease | undefined;
    const rv = lease?.metadata.resourceVersion ?? "";
    this.observed = { resourceVersion: rv, at: this.sightings.see(this.name, rv) };
    return lease;
  }

  /** Whether the record has gone unrenewed for its lease duration, by our clock and by the holder's. */
  private expired(lease: Lease, now: number): boolean {
    return leaseExpired(lease.spec ?? {}, this.observed?.at ?? now, now, this.leaseDurationSeconds);
  }

  private spec(sentAt: number, previous: LeaseSpec, takeover: boolean): LeaseSpec {
    const now = microTime(sentAt);
    return {
      ...previous,
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationSeconds,
      acquireTime: takeover || !previous.acquireTime ? now : previous.acquireTime,
      renewTime: now,
      leaseTransitions: (previous.leaseTransitions ?? 0) + (takeover ? 1 : 0),
    };
  }

  private async create(sentAt: number): Promise<boolean> {
    const lease: Lease = {
      apiVersion: LEASE_API,
      kind: "Lease",
      metadata: {
        name: this.name,
        namespace: this.namespace,
        labels: { ...this.options.labels, "app.kubernetes.io/managed-by": "syncward" },
        ...(this.options.ownerReferences ? { ownerReferences: this.options.ownerReferences } : {}),
      },
      spec: this.spec(sentAt, { leaseTransitions: 0 }, false),
    };
    try {
      try {
        this.written = (await this.client.create(lease)) as Lease;
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 404)) throw err;
        await ensureNamespace(this.client, this.namespace);
        this.written = (await this.client.create(lease)) as Lease;
      }
    } catch (err) {
      // Another replica created it first: it holds the lease.
      if (isConflict(err)) {
        this.heldSince = undefined;
        return false;
      }
      throw err;
    }
    this.heldSince = sentAt;
    return true;
  }

  /** Update with the resourceVersion just read; a 409 means another replica wrote first and won. */
  private async write(lease: Lease, sentAt: number, takeover: boolean): Promise<boolean> {
    try {
      await this.update(lease, sentAt, takeover);
    } catch (err) {
      if (isConflict(err)) {
        this.heldSince = undefined;
        return false;
      }
      throw err;
    }
    this.heldSince = sentAt;
    return true;
  }

  /**
   * A renewal of the record as our last write left it, without reading it first; false (the hold
   * untouched, for the reading renewal to decide) when it changed or went since.
   */
  private async writeIfUnchanged(last: Lease, sentAt: number): Promise<boolean> {
    try {
      await this.update(last, sentAt, false);
    } catch (err) {
      if (isConflict(err) || (err instanceof KubeApiError && err.status === 404)) return false;
      throw err;
    }
    this.heldSince = sentAt;
    return true;
  }

  private async update(lease: Lease, sentAt: number, takeover: boolean): Promise<void> {
    this.written = undefined;
    const written = (await this.client.replace({
      ...lease,
      apiVersion: LEASE_API,
      kind: "Lease",
      spec: this.spec(sentAt, lease.spec ?? {}, takeover),
    })) as Lease;
    const rv = written.metadata.resourceVersion ?? "";
    this.observed = { resourceVersion: rv, at: this.sightings.see(this.name, rv) };
    this.written = written;
  }
}
