// Spreading apps over replicas with the API server as the only coordinator. Each replica keeps a
// membership Lease of its own (a heartbeat: renewed like any lease, gone stale when the replica
// dies) and watches the Leases of its state namespace (a list, then a watch: no polling). Every
// few seconds, at once when a Lease changes hands, and at the moment a Lease would expire, it works
// out with shard-plan.ts which app Leases to try for and which to hand back, and tells the apps'
// reconcilers.
// The app Leases stay the lock: a plan is only a wish, so two replicas that disagree for a moment
// (one has not seen a join yet) still never operate one app at once.
import type { KubeClient } from "../kube/client.ts";
import type { KubeObject } from "../kube/object.ts";
import { LeaseLock, LeaseSightings, leaseExpired, parseMicroTime } from "../state/lease.ts";
import { sanitizeName, shortHash } from "../state/store.ts";
import { sleep } from "../util/sleep.ts";
import type { Logger } from "./environment-controller.ts";
import { planShard, type ShardApp, type ShardPlan } from "./shard-plan.ts";

const LEASE_API = "coordination.k8s.io/v1";
/** Marks a replica's membership Lease, apart from the apps' Leases. */
export const MEMBER_LABEL = "syncward.dev/member";
const MANAGED = "app.kubernetes.io/managed-by=syncward";

/** What the shard needs of one app: its Lease and a way to take it up or hand it back. */
export interface ShardedApp {
  readonly app: string;
  readonly leaseName: string;
  /** This replica holds the app's Lease and runs its environments. */
  readonly holding: boolean;
  /** Tries for the app's Lease; on success starts its environments. */
  claim(): Promise<boolean>;
  /** Stops the app's environments and releases its Lease so another replica takes it at once. */
  relinquish(): Promise<void>;
  /** The app is another replica's (or nobody's yet): requests are handed over, not run here. */
  standBy(): void;
}

export interface ShardOptions {
  client: KubeClient;
  /** The state namespace: where the apps' and the members' Leases live. */
  namespace: string;
  identity: string;
  leaseDurationSeconds?: number;
  log: Logger;
  /**
   * How long after announcing itself a replica waits before its first plan, so that replicas
   * started together see each other instead of each taking everything (default: one renewal
   * interval, a third of the lease duration).
   */
  settleMs?: number;
  /** The Pod this replica runs in: its membership Lease belongs to it and is deleted with it. */
  pod?: { name: string; uid: string };
  /**
   * A Lease of an app this replica does not run, new or changed since last told (another replica
   * started a repository GitHub told it of): the GitHub runtimes start it here too.
   */
  onUnknownLease?: (lease: KubeObject) => void;
  /** A Lease of the namespace was deleted (as it last read): a preview's, when another replica ended it. */
  onLeaseDeleted?: (lease: KubeObject) => void;
}

/** The membership Lease of a replica: `syncward-member-<identity>-<hash>`. */
export function memberLeaseName(identity: string): string {
  const readable = sanitizeName(identity, 30);
  return readable
    ? `syncward-member-${readable}-${shortHash(identity)}`
    : `syncward-member-${shortHash(identity)}`;
}

interface LeaseRecord extends KubeObject {
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | null };
}

/** What the namespace's Leases say: live members, each app's live holder, and the next expiry to look at. */
export function readLeases(o: {
  items: Iterable<LeaseRecord>;
  /** App Lease name -> app. */
  appLeases: ReadonlyMap<string, string>;
  self: string;
  firstSeen: (lease: LeaseRecord) => number;
  now: number;
  defaultDurationSeconds: number;
}): { members: string[]; holders: Map<string, string>; nextExpiry: number } {
  const members: string[] = [];
  const holders = new Map<string, string>();
  let nextExpiry = Number.POSITIVE_INFINITY;
  for (const lease of o.items) {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const seen = o.firstSeen(lease);
    if (!holder || leaseExpired(spec, seen, o.now, o.defaultDurationSeconds)) continue;
    if (lease.metadata.labels?.[MEMBER_LABEL] === "true") members.push(holder);
    const app = o.appLeases.get(lease.metadata.name);
    if (app !== undefined) holders.set(app, holder);
    if (holder !== o.self) {
      // Unless renewed before then, the lease is expired by both clocks at this moment.
      const durationMs = (spec.leaseDurationSeconds ?? o.defaultDurationSeconds) * 1000;
      const renewed = parseMicroTime(spec.renewTime);
      const at = Math.max(seen + durationMs, Number.isNaN(renewed) ? 0 : renewed + durationMs);
      nextExpiry = Math.min(nextExpiry, at);
    }
  }
  return { members, holders, nextExpiry };
}

export class Shard {
  readonly leaseDurationSeconds: number;
  readonly renewEveryMs: number;
  /** Shared with the apps' lease locks: a lease watched going stale here is taken at once there. */
  readonly sightings = new LeaseSightings();
  private readonly apps = new Map<string, ShardedApp>();
  /** The Lease names of `apps`. */
  private readonly appLeases = new Set<string>();
  private readonly membership: LeaseLock;
  /** The namespace's Leases as last listed and watched; undefined until the first list. */
  private leases?: Map<string, LeaseRecord>;
  private readonly watching = new AbortController();
  /** Aborts the current watch so it is listed afresh (it fell silent). */
  private relist?: AbortController;
  private nextExpiry = Number.POSITIVE_INFINITY;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private again = false;
  private state: "idle" | "settling" | "running" | "stopped" = "idle";
  /** Annotations of the unknown apps' Leases last passed to onUnknownLease, by Lease name. */
  private readonly told = new Map<string, string>();
  /** The last plan, for logs and tests. */
  lastPlan?: ShardPlan & { members: string[] };

  constructor(private readonly o: ShardOptions) {
    this.leaseDurationSeconds = o.leaseDurationSeconds ?? 15;
    this.renewEveryMs = Math.floor((this.leaseDurationSeconds * 1000) / 3);
    this.membership = new LeaseLock(o.client, o.namespace, memberLeaseName(o.identity), o.identity, {
      leaseDurationSeconds: this.leaseDurationSeconds,
      sightings: this.sightings,
      labels: { [MEMBER_LABEL]: "true" },
      ownerReferences: o.pod && [{ apiVersion: "v1", kind: "Pod", name: o.pod.name, uid: o.pod.uid }],
    });
  }

  get identity(): string {
    return this.o.identity;
  }

  /**
   * Joins before any app is registered: a replica that runs no repository yet still watches the
   * Leases, to hear of the repositories the others start (onUnknownLease), and counts as a member.
   */
  start(): void {
    if (this.state === "idle") this.begin();
  }

  /** Adds an app to share out; the first one starts the shard. */
  register(app: ShardedApp): void {
    this.apps.set(app.app, app);
    this.appLeases.add(app.leaseName);
    if (this.state === "idle") this.begin();
    else this.poke();
  }

  /** Forgets an app (its runtime stopped; the reconciler releases its own Lease). */
  unregister(app: ShardedApp): void {
    if (this.apps.get(app.app) === app) {
      this.apps.delete(app.app);
      this.appLeases.delete(app.leaseName);
    }
    this.poke();
  }

  /** Plans again soon (a lease was lost, an app came or went). */
  poke(): void {
    if (this.state !== "running") return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), 0);
    this.timer.unref();
  }

  /** Stops planning and withdraws this replica's membership (the apps release their own Leases). */
  async stop(): Promise<void> {
    this.state = "stopped";
    this.watching.abort();
    clearTimeout(this.timer);
    await this.ticking;
    await this.membership
      .stop()
      .catch((err) => this.o.log.warn({ err }, "shard: could not withdraw membership"));
  }

  private begin(): void {
    this.state = "settling";
    void this.watchLeases();
    void this.announce().finally(() => {
      if (this.state !== "settling") return;
      this.state = "running";
      this.timer = setTimeout(() => this.tick(), this.o.settleMs ?? this.renewEveryMs);
      this.timer.unref();
    });
  }

  /** Takes (or renews) the membership Lease and keeps it renewed; a lost one is taken again next round. */
  private async announce(): Promise<void> {
    // While renewing, the renewals keep it (or report it lost, and it is taken again here).
    if (this.membership.renewing) return;
    try {
      if (await this.membership.tryAcquire()) {
        this.membership.start(() =>
          this.o.log.warn({ identity: this.o.identity }, "shard: membership lapsed"),
        );
      } else {
        this.o.log.warn(
          { identity: this.o.identity },
          "shard: another process holds this replica's membership Lease (two replicas with one identity?)",
        );
      }
    } catch (err) {
      this.o.log.warn({ err }, "shard: could not announce this replica");
    }
  }

  private tick(): void {
    if (this.state !== "running") return;
    this.ticking = this.round()
      .catch((err) => this.o.log.warn({ err }, "shard: planning round failed; trying again"))
      .finally(() => {
        this.ticking = undefined;
        if (this.state !== "running") return;
        // The next round: a renewal interval from now, or sooner when a lease runs out before then.
        const untilExpiry = this.nextExpiry + 20 - Date.now();
        const delay = this.again ? 0 : Math.max(0, Math.min(this.renewEveryMs, untilExpiry));
        this.again = false;
        this.timer = setTimeout(() => this.tick(), delay);
        this.timer.unref();
      });
  }

  /**
   * Keeps `leases` current: a list, then a watch from its resourceVersion, again after an error.
   * Every version is recorded in the sightings when it arrives, so a lease that stops being
   * renewed is judged expired one lease duration after its last renewal.
   */
  private async watchLeases(): Promise<void> {
    const signal = this.watching.signal;
    const selector = { namespace: this.o.namespace, labelSelector: MANAGED };
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await this.o.client.list(LEASE_API, "Lease", selector);
          const now = Date.now();
          this.leases = new Map(list.items.map((l) => [l.metadata.name, l as LeaseRecord]));
          for (const l of list.items)
            this.sightings.see(l.metadata.name, l.metadata.resourceVersion ?? "", now);
          this.sightings.keepOnly(new Set(this.leases.keys()));
          // A Lease deleted while the watch was down and made again is news again.
          for (const name of this.told.keys()) if (!this.leases.has(name)) this.told.delete(name);
          rv = list.resourceVersion;
          this.poke();
        }
        this.relist = new AbortController();
        const both = AbortSignal.any([signal, this.relist.signal]);
        rv = await this.o.client.watch(
          LEASE_API,
          "Lease",
          { ...selector, resourceVersion: rv, signal: both },
          (type, obj) => this.observe(type, obj as LeaseRecord),
        );
        if (this.relist.signal.aborted) rv = undefined;
      } catch (err) {
        rv = undefined;
        if (!signal.aborted) this.o.log.debug?.({ err }, "shard: lease watch failed; listing again");
        await sleep(1000, signal);
      }
    }
  }

  private observe(type: "ADDED" | "MODIFIED" | "DELETED", lease: LeaseRecord): void {
    const leases = this.leases;
    if (!leases) return;
    const name = lease.metadata.name;
    const before = leases.get(name)?.spec?.holderIdentity ?? "";
    if (type === "DELETED") {
      leases.delete(name);
      // Made again later (a preview of the same pull request started again), it is news again.
      this.told.delete(name);
      this.o.onLeaseDeleted?.(lease);
    } else {
      leases.set(name, lease);
      this.sightings.see(name, lease.metadata.resourceVersion ?? "");
    }
    // A change of hands (a join, a leave, a release, a takeover) may change the plan; a renewal does
    // not. A Lease of an app unknown here, new or re-marked, may be a repository to start.
    const after = type === "DELETED" ? "" : (lease.spec?.holderIdentity ?? "");
    if (before !== after || (this.o.onUnknownLease && this.unknown(lease))) this.poke();
  }

  /** An app Lease (not a member's) whose annotations were not yet passed on. */
  private unknown(lease: LeaseRecord): boolean {
    if (lease.metadata.labels?.[MEMBER_LABEL] === "true" || this.appLeases.has(lease.metadata.name))
      return false;
    return this.told.get(lease.metadata.name) !== JSON.stringify(lease.metadata.annotations ?? {});
  }

  private async round(): Promise<void> {
    await this.announce();
    const leases = this.leases;
    if (!leases) return; // not listed yet: the first list pokes
    const now = Date.now();
    const own = leases.get(this.membership.name);
    if (
      this.membership.held &&
      own &&
      this.sightings.see(own.metadata.name, own.metadata.resourceVersion ?? "") +
        this.leaseDurationSeconds * 1000 <
        now
    ) {
      // Our own renewals have not shown up for a lease duration: the watch fell silent.
      this.relist?.abort();
      return;
    }
    const apps = [...this.apps.values()];
    if (this.o.onUnknownLease) {
      for (const lease of leases.values()) {
        if (!this.unknown(lease)) continue;
        this.told.set(lease.metadata.name, JSON.stringify(lease.metadata.annotations ?? {}));
        this.o.onUnknownLease(lease);
      }
    }
    const { members, holders, nextExpiry } = readLeases({
      items: leases.values(),
      appLeases: new Map(apps.map((a) => [a.leaseName, a.app])),
      self: this.o.identity,
      firstSeen: (l) => this.sightings.see(l.metadata.name, l.metadata.resourceVersion ?? "", now),
      now,
      defaultDurationSeconds: this.leaseDurationSeconds,
    });
    this.nextExpiry = nextExpiry;
    const view: ShardApp[] = apps.map((a) => ({
      app: a.app,
      // What this replica holds it knows best (a renewal may have landed after the listing).
      holder: a.holding ? this.o.identity : holders.get(a.app),
    }));
    const plan = planShard({ self: this.o.identity, members, apps: view });
    this.lastPlan = { ...plan, members };
    if (plan.release.length > 0 || plan.take.length > 0) {
      this.o.log.info({ identity: this.o.identity, members: members.length, ...plan }, "shard: rebalancing");
    }
    await Promise.all(plan.release.map((name) => this.apps.get(name)?.relinquish()));
    await Promise.all(plan.take.map((name) => this.apps.get(name)?.claim()));
    for (const app of this.apps.values()) if (!app.holding) app.standBy();
  }
}
