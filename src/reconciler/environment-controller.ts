// The guard of one environment. Level-triggered: every pass compares the tracked branch head and
// the live cluster with what Git declares and acts by policy; webhooks, polls, watch events and
// CLI calls only nudge it. Passes never overlap, and nudges during a pass coalesce into one more.
// What a pass does next is decided by decide.ts (pure); doing it is effects.ts, sync-operation.ts
// and self-heal.ts; every write asks the gate (gate.ts) first.

import { approvedConfigOf, renderConfigMoved } from "../config/stricter.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import { assessHealth, type HealthChecks, worstHealth } from "../engine/health/index.ts";
import { assess, outcomeWithoutWork, type SyncOutcome, type SyncRequest } from "../engine/sync.ts";
import type { KubeClient } from "../kube/client.ts";
import { clusterNameOf, UnknownDestinationError } from "../kube/clusters.ts";
import { KubeConnectionError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { timed } from "../observability/durations.ts";
import type { RenderedSource } from "../source/render.ts";
import { appendHistory } from "../state/history.ts";
import { instanceName } from "../state/identity.ts";
import type { StateStore } from "../state/store.ts";
import type {
  AutoRollbackNote,
  EnvironmentState,
  HandedOverSync,
  PinRecord,
  PromotionNote,
  RecordedPush,
  RollbackNote,
  Trigger,
} from "../state/types.ts";
import { short } from "../util/short-sha.ts";
import { addApproval, approvalsOf, countableApprovals, withdrawApproval } from "./approvals.ts";
import { autoRollbackDecision } from "./auto-rollback.ts";
import { runAutoRollback } from "./auto-rollback-run.ts";
import { nextAction, type PassInput } from "./decide.ts";
import { EnvironmentEffects } from "./effects.ts";
import type { Emit } from "./events.ts";
import type { GateDecision } from "./gate-decision.ts";
import { historyEntryOf } from "./history-entry.ts";
import { findOrphans, mayBeOrphan, type Orphan, RISKY_KINDS } from "./orphans.ts";
import { OutageBackoff } from "./outage-backoff.ts";
import type { PassSlots } from "./pass-slots.ts";
import {
  pinEndApprovalsRefusal,
  pinEndedMessage,
  pinNotAfterRefusal,
  pinNotEndedRefusal,
  pinnedApprovalText,
  pinnedRefusal,
  pinnedText,
  pinOf,
  type RollbackTarget,
  rollbackNote,
  rollbackNoteOf,
  rollbackTarget,
  rolledBackFrom,
  unpinMessage,
} from "./pin.ts";
import { effectivePolicy } from "./policy.ts";
import { type PromoteResult, promoteWith } from "./promotion/promote.ts";
import { Promotion, type PromotionLinks, type Target } from "./promotion/promotion.ts";
import { type AnnouncedPush, attributePass } from "./push-attribution.ts";
import { revisionFromBranch, revisionToTake, trackedRevision } from "./release/choose-revision.ts";
import { bindsRender, deployedRenderMoved, renderSeen } from "./render-binding.ts";
import type { RequiredChecks } from "./required-checks.ts";
import { resyncIntervalMs } from "./resync.ts";
import type { RevisionSource } from "./revision-source.ts";
import { heal, healNamed, mayHealNamed } from "./self-heal.ts";
import { stateWatchMark, watchStates } from "./state-watch.ts";
import { type ReleaseOptions, syncRevision } from "./sync-operation.ts";
import { selfHealHeldBy } from "./sync-windows.ts";
import { ManagedWatch } from "./watch.ts";

/** How long a pass waits for a cluster that gave no answer last time before reporting it unreachable. */
const UNREACHABLE_PROBE_MS = 3_000;

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  /** pino's child loggers: every line of an environment carries its app and environment. */
  child?(bindings: Record<string, string>): Logger;
}

export interface ControllerOptions {
  app: string;
  env: EnvironmentConfig;
  /**
   * The destination cluster's client, for every read, watch, dry run and write of the environment
   * (the reconciler's is a getter: kube/clusters.ts resolves it, and throws
   * UnknownDestinationError when the destination names no cluster syncward knows).
   */
  readonly client: KubeClient;
  /** syncward's own cluster, where the state lives (default: client). */
  stateClient?: KubeClient;
  store: StateStore;
  source: RevisionSource;
  emit: Emit;
  log: Logger;
  /** Watch managed objects for drift (default true). */
  watch?: boolean;
  /** Override env.pollInterval (ms); 0 disables polling. */
  pollIntervalMs?: number;
  healthTimeoutMs?: number;
  /** The config's compiled custom health checks (resourceCustomizations). */
  health?: HealthChecks;
  /**
   * Why this replica must not write to the cluster now (another replica holds the lease), or
   * undefined. Explicit syncs are refused while it says so; dry runs still answer.
   */
  standby?: () => string | undefined;
  /** requireChecks: which checks passed on a revision (the GitHub adapter); absent: none can be read. */
  checks?: RequiredChecks;
  /** Bounds the passes of the process's environments that run at once (pass-slots.ts); absent: no bound. */
  passes?: PassSlots;
  /**
   * How long idle polls may skip reading the cluster before a full pass (resync.ts); default
   * SYNCWARD_RESYNC_INTERVAL or 24h.
   */
  resyncIntervalMs?: number;
  /** Namespaces no sync writes besides the built-in reserved ones: the state namespace. */
  reservedNamespaces?: readonly string[];
  /** `promotion`: the upstream environments and their branches (promotion/promotion.ts). */
  promotion?: PromotionLinks;
  /**
   * Another environment is promoted after this one: its recorded health follows the live objects
   * on every pass (the evidence a promotion reads), and watch events run full passes.
   */
  tracksHealth?: boolean;
}

export interface ManualSync {
  trigger: Trigger;
  actor: string;
  revision?: string;
  prune?: boolean;
  force?: boolean;
  dryRun?: boolean;
  overridePruneLimit?: boolean;
  /** Let this sync empty the environment (render of 0 objects), without turning automation on. */
  allowEmpty?: boolean;
  /** Prune objects marked Prune=confirm / Delete=confirm. */
  confirmPrune?: boolean;
  /** Sync even when frozen (only for those allowed to). */
  ignoreFreeze?: boolean;
  /**
   * The request must be approved where the environment asks for approval (default: every request
   * but the CLI's, whose user already holds the cluster's credentials).
   */
  needsApproval?: boolean;
  onProgress?: SyncRequest["onProgress"];
  /** A promotion: the upstreams' evidence, kept with the history entry. */
  promotion?: PromotionNote;
  /** Said before the outcome's message in history (a rollback's). */
  note?: string;
  /** An automatic rollback: why, and the evidence, kept with the history entry. */
  autoRollback?: AutoRollbackNote;
  /** A person's rollback: which entry, who and why, kept with the history entry. */
  rollback?: RollbackNote;
  /**
   * An approval of a newer commit ends this pin: the sync may name another revision than the
   * pinned one, and the pin is removed only once the gate let the sync's first write through.
   */
  endsPin?: PinRecord;
}

/** The same pin (set by the same rollback): a rollback since sets another. */
function samePin(a: PinRecord | undefined, b: PinRecord): boolean {
  return a !== undefined && a.at === b.at && a.revision === b.revision;
}

/** What an approval did (EnvironmentController.approve). */
export interface Approved {
  approvers: string[];
  needed: number;
  released: boolean;
  refused?: string;
  expired: number;
  /** Approved in full, but its upstreams have not proven it: why, and it deploys once they have. */
  waiting?: string;
  /** The pin the approved commit ends (a newer commit of a pinned environment's branch). */
  endedPin?: PinRecord;
}

/** What a pass read before it looks at the cluster (readPass). */
interface PassRead {
  state: EnvironmentState;
  policy: ReturnType<typeof effectivePolicy>;
  /** What the environment takes from its branch (revisionFromBranch). */
  taken: Target;
  /** The revision the pass looks at: the one taken, else the one the environment runs. */
  head: string;
  /** Who the pass is attributed to (push-attribution.ts). */
  trigger: Trigger;
  actor: string;
}

/** What nextAction is shown by a pass (passInput), and whether the deployed render's config moved. */
type PassView = PassInput & {
  moved: boolean;
  state: EnvironmentState;
  policy: ReturnType<typeof effectivePolicy>;
  /** Pinned where an approval gates new releases: the pin may end, so idle polls read the branch. */
  gatedPin: boolean;
};

/** An environment's instance name (state/identity.ts builds every name from the app's identity). */
export { instanceName } from "../state/identity.ts";

export class EnvironmentController {
  readonly instance: string;
  /** Doing what the passes and requests decide (render, record, sync, heal). */
  private readonly fx: EnvironmentEffects;
  private chain: Promise<unknown> = Promise.resolve();
  private queued: { trigger: Trigger; actor: string } | undefined;
  /** The last push announced for the branch (see attributePass). */
  private announced: AnnouncedPush | undefined;
  /** The objects watch events named for the queued pass, while only watch events asked for it. */
  private queuedNamed: Set<string> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  /** When a bad release's rollback.onDegraded ends (see afterPass). */
  private rollbackTimer: NodeJS.Timeout | undefined;
  private watcher: ManagedWatch | undefined;
  private undeclared: ManagedWatch | undefined;
  private stopped = false;
  /** Aborted by stop(): a pass waiting for a slot gives up waiting. */
  private stopping = new AbortController();
  /** Running its own loop (start() was called), as opposed to serving one CLI command. */
  private looping = false;
  private lastDriftSignature = "";
  private lastOrphanSignature = "";
  /** The branch head the pin last held back (see announcePinned). */
  private lastPinnedHead = "";
  /** The latest orphan scan (derived, so kept in memory only). */
  orphans: Orphan[] = [];
  /** The next nudge comes from the poll timer (see nudge). */
  private fromTimer = false;
  /** A pass is running (an outage it meets is reported by its own failure). */
  private passing = false;
  /** Backoff of the machine's passes after passes that failed for want of answers. */
  private readonly outageBackoff = new OutageBackoff();
  /** Only the poll timer asked for the queued pass: it may be a quiet one. */
  private queuedQuiet = false;
  /**
   * What the last full pass that found the environment in sync at its synced commit saw: a poll
   * finding the same may read nothing from the cluster (see quiet()).
   */
  private settled:
    | { head: string; env: EnvironmentConfig; marks: string; at: number; pinned: boolean }
    | undefined;
  /** The state watch heard a write of this environment's state since the last full pass began. */
  private stateTouched = true;
  private stopStateWatch: (() => void) | undefined;
  /** The cluster client the watches above are open on. */
  private watchingOn: KubeClient | undefined;
  /** Stops listening for the watched cluster's outages ending. */
  private stopReachability?: () => void;
  private readonly resyncMs: number;
  /** When the last full poll (the assessment and the orphan scan) began: the hard resync counts from it. */
  private lastFullPoll = 0;

  constructor(private readonly o: ControllerOptions) {
    this.instance = instanceName(o.app, o.env.name);
    this.resyncMs = o.resyncIntervalMs ?? resyncIntervalMs();
    this.fx = new EnvironmentEffects(o, this.instance, {
      wakeAt: (when) => this.wakeAt(when),
      stopped: () => this.stopped,
    });
    const env = o.env;
    if (env.promotion && o.promotion)
      this.fx.promotion = new Promotion({
        app: o.app,
        env: { ...env, promotion: env.promotion },
        links: o.promotion,
        store: o.store,
        stateClient: o.stateClient ?? o.client,
        checks: o.checks,
        ...(o.source.contains ? { contains: o.source.contains.bind(o.source) } : {}),
        wake: () => this.nudge("promotion", "syncward"),
        emit: o.emit,
      });
  }

  /**
   * The rules a new revision is held to now: the config's, or the stricter of them and the
   * deployed revision's when the new config loosens a guard (commands, approval, namespaces).
   */
  async rules(): Promise<EnvironmentConfig> {
    return (await this.fx.gate.rules(await this.o.store.load(this.instance))).rules;
  }

  /** The revision an approval given now is judged from (see Gate.base; "" for a first deployment). */
  async base(state: EnvironmentState): Promise<string> {
    return this.fx.gate.base(state);
  }

  get env(): EnvironmentConfig {
    return this.o.env;
  }

  /** The custom health checks every health reading of this environment uses. */
  get health(): HealthChecks | undefined {
    return this.o.health;
  }

  start(): void {
    this.stopped = false;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.looping = true;
    const interval = this.o.pollIntervalMs ?? this.o.env.pollInterval;
    if (interval > 0) {
      const schedule = () => {
        // Up to 20% jitter so a fleet of environments does not poll in lockstep.
        this.pollTimer = setTimeout(
          () => {
            this.fromTimer = true;
            this.nudge("poll", "syncward");
            this.fromTimer = false;
            schedule();
          },
          interval + Math.random() * interval * 0.2,
        );
        this.pollTimer.unref();
      };
      schedule();
    }
    if (this.o.watch ?? true) {
      // Through the process's one watch of the state namespace: a write of this environment's state
      // (by anyone) makes the next poll a full one.
      this.stopStateWatch = watchStates(this.stateClient, this.o.store.namespace, [this.instance], () => {
        this.stateTouched = true;
      });
      this.watchDestination();
    }
    // The upstreams' states, wherever they run: a window closing wakes this environment.
    this.fx.promotion?.start();
    this.nudge("poll", "syncward");
  }

  private get stateClient(): KubeClient {
    return this.o.stateClient ?? this.o.client;
  }

  /**
   * The destination's client, or why there is none (a name no cluster goes by, a registry Secret
   * that cannot be read): the pass then stops before any request to a cluster.
   */
  private destination(): { client: KubeClient } | { problem: string } {
    try {
      return { client: this.o.client };
    } catch (err) {
      if (err instanceof UnknownDestinationError) return { problem: err.message };
      throw err;
    }
  }

  /**
   * "cluster X unreachable since T" while the destination's API server gives no answer: one short
   * probe first, so an environment on a cluster that is down costs a few seconds a pass, not a
   * pass's worth of timeouts, and a cluster that is back is used at once (with a full pass).
   */
  private async unreachable(client: KubeClient): Promise<string | undefined> {
    if (!client.reachability.current) return undefined;
    try {
      await client.ping(UNREACHABLE_PROBE_MS);
    } catch {
      // Still down: reported below with the outage's start.
    }
    const outage = client.reachability.current;
    if (!outage) return undefined;
    return `cluster ${this.clusterName(client)} unreachable since ${new Date(outage.since).toISOString()} (${outage.error})`;
  }

  private clusterName(client: KubeClient): string {
    return clusterNameOf(this.o.env.destination, client.contextName);
  }

  /**
   * A pass that failed because the destination stopped answering midway: the environment reads
   * Unknown with the outage, as it would had the pass started after it. Nothing was decided from
   * what could not be read (no prune, no Synced).
   */
  private async reportOutage(trigger: Trigger, actor: string, err: unknown): Promise<boolean> {
    if (!(err instanceof KubeConnectionError)) return false;
    const found = this.destination();
    if (!("client" in found)) return false;
    this.outageBackoff.failed();
    // A server that answers /version but not every request (etcd down, an aggregated API, one bad
    // backend) is no better known: the environment reads Unknown all the same.
    const problem =
      (await this.unreachable(found.client)) ??
      `cluster ${this.clusterName(found.client)} did not answer every request of a pass (${err.code ?? "no answer"})`;
    try {
      const state = await this.o.store.load(this.instance);
      const head = trackedRevision(await this.o.source.head(this.o.env.source.branch), state.pin);
      await this.fx.reportDestination(head, state, trigger, actor, problem);
    } catch (recordErr) {
      // The state lives on the same cluster, or GitHub is down too: the log is all there is.
      this.o.log.warn({ err: recordErr, instance: this.instance }, problem);
    }
    return true;
  }

  /**
   * The watches of the managed and the undeclared objects, on the destination's client; opened
   * again on a new client (a cluster Secret added or rotated since), none while it resolves to nothing.
   */
  private watchDestination(): void {
    if (!this.looping || !(this.o.watch ?? true)) return;
    const found = this.destination();
    const client = "client" in found ? found.client.root : undefined;
    if (client === this.watchingOn) return;
    this.watcher?.stop();
    this.undeclared?.stop();
    this.stopReachability?.();
    this.watcher = this.undeclared = this.stopReachability = undefined;
    this.watchingOn = client;
    if (!("client" in found)) return;
    // The cluster stopped answering (a request, a watch's PING) or answers again (a watch
    // reconnected, a probe): a pass at once, which reports the outage, or reads everything afresh.
    // (Not while a pass runs: its own failure reports the outage.)
    this.stopReachability = found.client.reachability.onChange((outage) => {
      if (this.looping && (!outage || !this.passing)) this.nudge("poll", "syncward");
    });
    this.watcher = new ManagedWatch(
      found.client,
      this.instance,
      this.o.env.policy.namespaces,
      this.o.log,
      (named) => this.nudge("selfHeal", "syncward", named),
    );
    // A risky object nobody declared (a DaemonSet, a privileged Pod) is reported within seconds.
    this.undeclared = new ManagedWatch(
      found.client,
      this.instance,
      this.o.env.policy.namespaces,
      this.o.log,
      () => void this.serialize(() => this.rescanOrphans()),
      { undeclared: true, accept: (obj) => mayBeOrphan(obj, this.instance) },
    );
    this.undeclared.ensureKinds(RISKY_KINDS);
  }

  /**
   * rollback.onDegraded: after every pass (which records the health a watch event changed), whether
   * the newest release has been bad long enough; if not yet, a timer for the moment it will have
   * been, so the rollback starts when the wait ends, not at the next poll.
   */
  private async afterPass(): Promise<void> {
    try {
      if (this.stopped || this.o.standby?.()) return;
      const state = await this.o.store.load(this.instance);
      const decision = autoRollbackDecision({
        rule: this.o.env.rollback,
        automated: effectivePolicy(this.o.env, state).automated,
        state,
        now: new Date(),
      });
      clearTimeout(this.rollbackTimer);
      if (decision.kind === "wait") {
        // At most an hour ahead, then it decides again: a delay past setTimeout's 2^31 ms would fire at once.
        this.rollbackTimer = setTimeout(
          () => this.nudge("poll", "syncward"),
          Math.min(Math.max(0, decision.until.getTime() - Date.now()) + 50, 3_600_000),
        );
        this.rollbackTimer.unref();
      }
      if (decision.kind !== "refuse" && decision.kind !== "rollback") return;
      await runAutoRollback(
        {
          instance: this.instance,
          env: this.o.env.name,
          store: this.o.store,
          emit: this.o.emit,
          log: this.o.log,
          rollback: (request) => this.rollback(request),
        },
        decision,
      );
    } catch (err) {
      this.o.log.error({ err, instance: this.instance }, "automatic rollback failed");
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.looping = false;
    clearTimeout(this.pollTimer);
    clearTimeout(this.wakeTimer);
    clearTimeout(this.rollbackTimer);
    this.watcher?.stop();
    this.undeclared?.stop();
    this.watcher = this.undeclared = this.watchingOn = undefined;
    this.stopReachability?.();
    this.stopReachability = undefined;
    this.outageBackoff.reset();
    this.stopStateWatch?.();
    this.stopStateWatch = undefined;
    this.fx.promotion?.stop();
    this.settled = undefined;
    for (const sync of this.fx.writing) sync.abort();
    await this.chain.catch(() => undefined);
  }

  /** A push webhook said who moved the branch to `revision`: an approver must not be them. */
  pushedBy(push: RecordedPush): void {
    this.fx.gate.pushedBy(push);
  }

  /** A push brought `revision`: asks for its pass, and a machine pass that takes it first is its sync. */
  nudgePushed(revision: string, trigger: Trigger, actor: string): void {
    this.announced = { revision, trigger, actor };
    this.nudge(trigger, actor);
  }

  /** Asks for a pass soon; passes never overlap and nudges during one coalesce into the next. */
  nudge(trigger: Trigger, actor: string, named?: ReadonlySet<string>): void {
    if (this.stopped || this.o.standby?.()) return;
    // After passes that failed for want of answers, the machine's own passes wait their turn.
    if (
      (trigger === "poll" || trigger === "selfHeal") &&
      this.outageBackoff.defer(() => this.nudge("poll", actor))
    )
      return;
    const first = !this.queued;
    this.queuedQuiet = this.fromTimer && (first || this.queuedQuiet);
    // A pass only watch events asked for may look at just what they named; anything else looks everywhere.
    this.queuedNamed =
      trigger === "selfHeal" && named && (first || this.queuedNamed)
        ? new Set([...(this.queuedNamed ?? []), ...named])
        : undefined;
    // A person's trigger outranks the machine's in the history it produces.
    if (!this.queued || this.queued.trigger === "poll" || this.queued.trigger === "selfHeal")
      this.queued = { trigger, actor };
    if (first) this.serialize(() => this.runQueued());
  }

  /** Resolves when every pass queued so far has finished. */
  async idle(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.chain;
      await seen.catch(() => undefined);
    } while (seen !== this.chain);
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async runQueued(): Promise<void> {
    // Nudges while this waits for a slot coalesce into the pass it then runs.
    const release = await this.o.passes?.acquire(this.stopping.signal);
    const q = this.queued;
    const named = this.queuedNamed;
    const quiet = this.queuedQuiet;
    this.queued = undefined;
    this.queuedNamed = undefined;
    this.queuedQuiet = false;
    try {
      if (!q || this.stopped) return;
      if (quiet && (await this.quiet())) return;
      const where = { kind: "reconcile", instance: this.instance, env: this.o.env.name } as const;
      this.passing = true;
      await timed(where, () => this.pass(q.trigger, q.actor, named));
      this.outageBackoff.reset();
      // Not awaited: a rollback is a sync of its own, serialized after this pass.
      if (this.o.env.rollback) void this.afterPass();
    } catch (err) {
      if (this.stopped)
        this.o.log.info(
          { err, instance: this.instance },
          "stopped during a pass; what it was doing is left to whoever runs next",
        );
      else if (!(q && (await this.reportOutage(q.trigger, q.actor, err))))
        this.o.log.error({ err, instance: this.instance }, "reconcile pass failed");
    } finally {
      this.passing = false;
      release?.();
    }
  }

  /**
   * The watches of everything a full pass reads: the managed objects, the undeclared ones and the
   * state. Undefined while any of them is not connected.
   */
  private marks(): string | undefined {
    const marks = [
      this.watcher?.mark(),
      this.undeclared?.mark(),
      stateWatchMark(this.stateClient, this.o.store.namespace),
    ];
    return marks.includes(undefined) ? undefined : marks.join(" ");
  }

  /**
   * A poll that may read nothing from the cluster: the last full pass found the environment in sync
   * at its synced commit, the branch head and the config are the same, the state was not written,
   * and every watch stayed connected with no event since (any event would have asked for a pass of
   * its own). A full pass runs anyway once the hard-resync interval has passed. An undeclared scope
   * not allowed to watch some kind still scans for orphans (by listing) as every poll did.
   */
  private async quiet(): Promise<boolean> {
    const settled = this.settled;
    if (!settled || this.stateTouched || settled.env !== this.o.env) return false;
    if (Date.now() - settled.at >= this.resyncMs) return false;
    if (this.marks() !== settled.marks) return false;
    // A pinned environment follows its pin, not the branch (removing the pin writes the state).
    const head = settled.pinned ? settled.head : await this.o.source.head(this.o.env.source.branch);
    if (head !== settled.head || this.marks() !== settled.marks || this.stateTouched) return false;
    this.o.log.debug(
      { instance: this.instance, revision: head },
      "idle poll: nothing changed since the last full pass",
    );
    if (this.undeclared?.blind) await this.scanOrphans(head, await this.fx.desiredAt(head));
    return true;
  }

  /**
   * One level-triggered pass: what the environment takes now (readPass), its render (renderPass),
   * then a release of a new revision (releasePass) or the cluster compared with the render and
   * healed or reported (comparePass).
   */
  private async pass(passTrigger: Trigger, passActor: string, named?: ReadonlySet<string>): Promise<void> {
    // Taken before anything is read: whatever changes from here on shows as a different mark.
    const started = Date.now();
    const marks = this.marks();
    this.settled = undefined;
    this.stateTouched = false;
    const read = await this.readPass(passTrigger, passActor);
    if (!read) return;
    const rendered = await this.renderPass(read, passTrigger === "poll" ? started : undefined);
    if (!rendered) return;
    const input = await this.passInput(read, rendered);
    if (await this.releasePass(read, rendered, input)) return;
    await this.comparePass(rendered, input, marks, named);
  }

  /**
   * The state (after a sync another replica handed over), the policy, and the revision the pass
   * looks at: what the environment takes from its branch (revisionFromBranch), else the one it
   * runs. A pinned pass may end the pin by an approval instead (offerPinEnd); an approval that
   * waited for its upstreams' proof is released once they proved it. Undefined: nothing to look at.
   */
  private async readPass(passTrigger: Trigger, passActor: string): Promise<PassRead | undefined> {
    const env = this.o.env;
    let state = await this.o.store.load(this.instance);
    if (state.handedOver) {
      await this.runHandedOver(state.handedOver);
      state = await this.o.store.load(this.instance);
    }
    const policy = effectivePolicy(env, state);
    const branchHead = await this.o.source.head(env.source.branch);
    const taken = await revisionFromBranch(this.fx.promotion, async () => branchHead, state);
    if (state.pin) {
      if (await this.offerPinEnd(state, state.pin, branchHead, policy, passTrigger, passActor))
        return undefined;
    } else this.fx.promotion?.announce(branchHead, taken.waiting);
    if (state.pendingSync?.approvedAwaitingProof) await this.releaseProven(state.pendingSync.revision);
    const head = taken.revision ?? state.lastSyncedRevision;
    if (!head) return undefined;
    const { trigger, actor } = attributePass(
      { trigger: passTrigger, actor: passActor },
      head,
      state.lastSyncedRevision,
      this.announced,
    );
    return { state, policy, taken, head, trigger, actor };
  }

  /**
   * The render of the pass's revision, once the destination answers (else reported, as is a render
   * that fails); the watches follow its kinds. A poll (`pollStarted`) scans for orphans too.
   */
  private async renderPass(
    read: PassRead,
    pollStarted: number | undefined,
  ): Promise<RenderedSource | undefined> {
    const { state, head, trigger, actor } = read;
    const found = this.destination();
    // Watches first: on a cluster that is down they retry, and the first answer brings a pass.
    this.watchDestination();
    const problem = "problem" in found ? found.problem : await this.unreachable(found.client);
    if (problem) {
      await this.fx.reportDestination(head, state, trigger, actor, problem);
      return undefined;
    }
    const rendered = await this.fx.renderOrReport(head, state, trigger, actor);
    if (!rendered) return undefined;
    this.watcher?.ensureKinds([
      ...(state.inventory ?? []),
      ...rendered.objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind })),
    ]);
    if (pollStarted !== undefined) {
      await this.scanOrphans(head, rendered);
      this.lastFullPoll = pollStarted;
    }
    return rendered;
  }

  /** What nextAction (decide.ts) is shown; `moved`: the deployed commit's render config moved. */
  private async passInput(read: PassRead, rendered: RenderedSource): Promise<PassView> {
    const env = this.o.env;
    const { policy, head } = read;
    let state = read.state;
    // A config change since the deployed commit was synced that renders it differently (source or
    // destination settings, possibly changed on another branch): a gated environment treats the
    // commit as a new release, which the gate asks approval for, never as drift to heal.
    const moved =
      Boolean(env.approval ?? state.deployedRules?.approval) &&
      head === state.lastSyncedRevision &&
      renderConfigMoved(env, state.deployedRules);
    if (moved) state = { ...state, lastSyncedRevision: undefined };
    const fresh = policy.automated && head !== state.lastSyncedRevision;
    const rules = fresh ? await this.fx.gate.rules(state) : undefined;
    return {
      moved,
      policy,
      state,
      head,
      // Only a new revision is compared with the deployed render (passes at the same one are many).
      // (Never "no change" when the config moved: the same objects may now go elsewhere.)
      digest: fresh && !moved ? renderSeen(rendered.objects, env.destination.namespace).digest : "",
      // A config change that loosens a guard is never "no change": it waits under the old rule.
      gated: Boolean(rules?.rules.approval) && rules?.weakens.length === 0,
      renderMoved: this.renderMoved(state, head, rendered),
      healHeld: selfHealHeldBy(env.syncWindows, new Date()),
      gatedPin: Boolean(state.pin && (env.approval ?? state.deployedRules?.approval)),
    };
  }

  /**
   * A new revision: advanced as "no change" when it renders what is deployed and the gate lets it
   * (every check but the approval), else released (syncRevision). True when the pass ends here.
   */
  private async releasePass(read: PassRead, rendered: RenderedSource, input: PassView): Promise<boolean> {
    const { head, trigger, actor, taken } = read;
    let action = nextAction(input);
    if (action.kind === "noChange") {
      // "No change" skips only the approval: the commit must still pass every other check (a
      // freeze, a window, its signature, required checks). And a chart's render is not a function
      // of the commit alone (the cluster's version and APIs, `now` in a template), so a chart
      // source never advances unapproved on an equal render today.
      const gate =
        rendered.renderer === "helm"
          ? undefined
          : await this.fx.gate.check({
              path: "manual",
              revision: head,
              trigger,
              actor,
              needsApproval: false,
            });
      if (gate?.allowed) {
        await this.fx.advanceUnchanged(head, trigger, actor);
        return true;
      }
      action = { kind: "sync" };
    }
    if (action.kind !== "sync") return false;
    await syncRevision(this.fx, head, trigger, actor, {
      prune: input.policy.prune,
      loop: true,
      path: "automated",
      ...(taken.note && taken.revision === head ? { promotion: taken.note } : {}),
    });
    return true;
  }

  /**
   * The cluster compared with the render (only the objects watch events named, when that can
   * stand in for the whole): in sync (recordInSync), healed (self-heal.ts), or reported out of
   * sync (reportOutOfSync).
   */
  private async comparePass(
    rendered: RenderedSource,
    input: PassView,
    marks: string | undefined,
    named: ReadonlySet<string> | undefined,
  ): Promise<void> {
    const { head, policy, state } = input;
    if (named && mayHealNamed(input) && !this.o.tracksHealth) {
      if (await healNamed(this.fx, head, rendered, named, state)) return;
    }
    const assessment = await assess(
      this.o.client,
      this.fx.target,
      this.fx.request(head, rendered.objects, policy.prune, state),
    );
    const { plan, live } = assessment;
    const drifted = plan.steps.flatMap((s) => s.tasks);
    const extra = [...plan.prunes, ...plan.requiresPruning].map((p) => p.key);
    const action = nextAction({ ...input, assessed: { drifted: drifted.length, extra: extra.length } });
    if (action.kind === "inSync") return this.recordInSync(input, live, action.markSynced, marks);
    if (action.kind === "heal")
      return heal(
        this.fx,
        head,
        rendered,
        drifted.map((t) => ({ key: t.key, paths: t.drifted, live: live.get(t.key), obj: t.obj })),
        policy.prune,
        state,
        assessment,
      );
    if (action.kind === "outOfSync") await this.reportOutOfSync(input, live, drifted, extra, action.reason);
  }

  /**
   * Nothing differs: the state says Synced (and the health the objects show, after an outage or
   * for a downstream's evidence); a poll finding the same next time may read nothing (quiet()).
   */
  private async recordInSync(
    input: PassView,
    live: ReadonlyMap<string, KubeObject>,
    markSynced: boolean,
    marks: string | undefined,
  ): Promise<void> {
    const { head, state, moved } = input;
    this.lastDriftSignature = "";
    if (marks && head === state.lastSyncedRevision && !moved)
      // (A gated environment's pin may end with an approval of a newer head: it reads the branch.)
      this.settled = {
        head,
        env: this.o.env,
        marks,
        at: this.lastFullPoll,
        pinned: Boolean(state.pin && !input.gatedPin),
      };
    // After an outage (health Unknown: nothing could be read) the objects just read say it again;
    // an upstream of a promotion records every change (its health is a downstream's evidence).
    const now = this.liveHealth(live);
    const health =
      state.health === "Unknown" || (this.o.tracksHealth && state.health !== now) ? now : undefined;
    if (markSynced || health)
      await this.o.store.update(this.instance, (s) => {
        if (markSynced) s.syncStatus = "Synced";
        if (health && (s.health === "Unknown" || this.o.tracksHealth)) s.health = health;
      });
  }

  /** The difference is left (no self-heal, a freeze, stuck): the state and, once per drift, the event say why. */
  private async reportOutOfSync(
    input: PassView,
    live: ReadonlyMap<string, KubeObject>,
    drifted: ReadonlyArray<{ key: string; drifted: string[]; action: string }>,
    extra: string[],
    reason: string,
  ): Promise<void> {
    const { head, state } = input;
    if (this.o.tracksHealth && state.health !== this.liveHealth(live)) {
      const health = this.liveHealth(live);
      await this.o.store.update(this.instance, (s) => {
        s.health = health;
      });
    }
    const driftedFields = drifted.flatMap((t) =>
      t.drifted.length > 0
        ? t.drifted.map((p) => `${t.key} ${p}`)
        : [`${t.key} (${t.action === "create" ? "missing" : "changed"})`],
    );
    const signature = `${head}|${driftedFields.join(",")}|${extra.join(",")}`;
    if (state.syncStatus !== "OutOfSync") {
      await this.o.store.update(this.instance, (s) => {
        s.syncStatus = "OutOfSync";
      });
    }
    if (signature === this.lastDriftSignature) return;
    this.lastDriftSignature = signature;
    this.o.log.info(
      { instance: this.instance, revision: head, drifted: driftedFields, requiresPruning: extra },
      `OutOfSync: ${reason}`,
    );
    this.o.emit({
      type: "outOfSync",
      instance: this.instance,
      env: this.o.env.name,
      revision: head,
      drifted: driftedFields,
      requiresPruning: extra,
      reason,
    });
  }

  /**
   * A pinned pass. On a gated, automated environment the newer commit of the branch it would take
   * is announced for approval, saying that approving it ends the pin; once it is approved in full
   * it is released (releaseApproved) after this pass, which then ends (true). Anything else the
   * pin holds back is said once on its own check run (announcePinned).
   */
  private async offerPinEnd(
    state: EnvironmentState,
    pin: PinRecord,
    branchHead: string,
    policy: { automated: boolean; prune: boolean },
    trigger: Trigger,
    actor: string,
  ): Promise<boolean> {
    const candidate = policy.automated
      ? (await revisionToTake(this.fx.promotion, branchHead, pin.revision)).revision
      : undefined;
    const verdict =
      candidate && candidate !== pin.revision ? await this.pinVerdict(state, candidate) : undefined;
    if (!candidate || !verdict || "refusal" in verdict) {
      this.announcePinned(branchHead, pin);
      return false;
    }
    // Asked as the approval's release it would be (the machine writes nothing but the pinned
    // revision): its wait is announced, saying that approving it ends the pin.
    const decision = await this.fx.gate.check({
      path: "manual",
      revision: candidate,
      trigger,
      actor,
      needsApproval: true,
      wait: { manual: false, prune: policy.prune },
      ...(verdict.note ? { waitNote: verdict.note } : {}),
      state,
    });
    if (!decision.allowed) return false;
    const done = await this.releaseApproved(candidate, decision.approvals?.at(-1));
    return done.endedPin !== undefined;
  }

  /**
   * What the pin says of an approved release of `revision`: nothing when not pinned, or pinned at
   * it; on a gated environment, when it is a newer commit of the branch the pinned one is on, the
   * note its wait carries (approving it ends the pin); otherwise why it is refused.
   */
  private async pinVerdict(
    state: EnvironmentState,
    revision: string,
  ): Promise<{ note?: string } | { refusal: string }> {
    const pin = state.pin;
    if (!pin || pin.revision === revision) return {};
    const env = this.o.env;
    const refused = pinnedRefusal(pin, revision, env.name) ?? "";
    if (!(await this.fx.gate.rules(state)).rules.approval) return { refusal: refused };
    if (!(await this.newerOnBranch(pin.revision, revision)))
      return { refusal: pinNotEndedRefusal(pin, revision, env.name, env.source.branch) };
    // The release the rollback went back from, and anything before it, is what the pin is about.
    const from = pin.from;
    if (from && from !== pin.revision && !(await this.strictlyAfter(from, revision)))
      return { refusal: pinNotAfterRefusal({ ...pin, from }, revision, env.name, env.source.branch) };
    return { note: pinnedApprovalText(pin, env.name) };
  }

  /**
   * `revision` descends from `pinned` and is on the tracked branch (its head or an ancestor of it):
   * a force push that rewrote the history, or a commit of another line, does not qualify. A source
   * that cannot tell answers no.
   */
  private async newerOnBranch(pinned: string, revision: string): Promise<boolean> {
    const source = this.o.source;
    if (!source.contains) return false;
    const head = await source.head(this.o.env.source.branch);
    return (await source.contains(pinned, revision)) && (await source.contains(revision, head));
  }

  /** `revision` descends from `from` and is another commit. A source that cannot tell answers no. */
  private async strictlyAfter(from: string, revision: string): Promise<boolean> {
    if (revision === from || !this.o.source.contains) return false;
    return this.o.source.contains(from, revision);
  }

  /**
   * A commit the pin holds back (pushed since the rollback): said once on its own check run, which
   * would otherwise show nothing of syncward and leave its pusher wondering.
   */
  private announcePinned(branchHead: string, pin: PinRecord): void {
    const said = `${branchHead}|${pin.at}`;
    if (branchHead === pin.revision || said === this.lastPinnedHead) return;
    this.lastPinnedHead = said;
    const env = this.o.env.name;
    this.o.emit({
      type: "waiting",
      instance: this.instance,
      env,
      revision: branchHead,
      reason: pinnedText(pin, env),
      pinned: true,
    });
  }

  /** The worst health of the objects just read (none with a health: Healthy). */
  private liveHealth(live: ReadonlyMap<string, KubeObject>): string {
    return worstHealth([...live.values()].map((o) => assessHealth(o, this.health)))?.status ?? "Healthy";
  }

  /** A gated environment's deployed revision now renders otherwise than what it applied (render-binding.ts). */
  private renderMoved(state: EnvironmentState, head: string, rendered: RenderedSource): boolean {
    if (!bindsRender(this.o.env, state)) return false;
    return (
      deployedRenderMoved(state, head, renderSeen(rendered.objects, this.o.env.destination.namespace)) !==
      undefined
    );
  }

  /** Reports objects nobody declared; never deletes them. */
  async scanOrphans(head: string, rendered: RenderedSource): Promise<Orphan[]> {
    const declared = new Set(
      rendered.objects.map((o) =>
        keyString(
          keyOf({
            ...o,
            metadata: { ...o.metadata, namespace: o.metadata.namespace ?? this.o.env.destination.namespace },
          }),
        ),
      ),
    );
    this.orphans = await findOrphans(this.o.client, this.instance, this.o.env.policy.namespaces, declared);
    const signature = this.orphans.map((o) => o.key).join(",");
    if (signature !== this.lastOrphanSignature) {
      this.lastOrphanSignature = signature;
      if (this.orphans.length > 0) {
        this.o.log.warn(
          { instance: this.instance, orphans: this.orphans },
          `${this.orphans.length} object(s) in the environment's namespaces are not declared in Git (left alone)`,
        );
        this.o.emit({
          type: "orphans",
          instance: this.instance,
          env: this.o.env.name,
          revision: head,
          orphans: this.orphans,
        });
      }
    }
    return this.orphans;
  }

  /** An undeclared object appeared or changed: scan again at the revision being tracked. */
  private async rescanOrphans(): Promise<void> {
    if (this.stopped) return;
    try {
      const { pin } = await this.o.store.load(this.instance);
      const head = trackedRevision(await this.o.source.head(this.o.env.source.branch), pin);
      await this.scanOrphans(head, await this.fx.desiredAt(head));
    } catch (err) {
      this.o.log.debug(
        { err: String(err), instance: this.instance },
        "orphan scan after a watch event failed",
      );
    }
  }

  private wakeAt(when: Date | undefined): void {
    clearTimeout(this.wakeTimer);
    if (!when) return;
    this.wakeTimer = setTimeout(
      () => this.nudge("poll", "syncward"),
      Math.max(0, when.getTime() - Date.now()) + 50,
    );
    this.wakeTimer.unref();
  }

  /**
   * A sync a person asked for (CLI, PR comment, button). Serialized with the loop's passes. On a
   * replica without the app's lease it is handed over (see HandedOverSync) and `handedOver` is set.
   */
  sync(request: ManualSync): Promise<SyncOutcome & { handedOver?: boolean; held?: GateDecision }> {
    // A dry run writes nothing, so it need not wait for the passes, nor make them wait for it
    // (a preview must never hold up a sync or a self-heal).
    if (request.dryRun) return this.syncNow(request);
    return this.serialize(() => this.syncNow(request));
  }

  private async syncNow(
    request: ManualSync,
  ): Promise<SyncOutcome & { handedOver?: boolean; held?: GateDecision }> {
    const env = this.o.env;
    const state = await this.o.store.load(this.instance);
    const policy = effectivePolicy(env, state);
    const requested = request.revision
      ? { revision: await this.o.source.resolve(request.revision) }
      : await this.revisionFor(state);
    if ("refusal" in requested)
      return this.fx.refuseManual(requested.refusal, requested.head, request.trigger, request.actor);
    const revision = requested.revision;
    const promotion = request.promotion ?? ("promotion" in requested ? requested.promotion : undefined);
    const needsApproval = request.needsApproval ?? request.trigger !== "cli";
    // Another revision than the pinned one would be put straight back by the next pass: refused,
    // unless an approval of a newer commit ends this very pin (not one set since).
    const ending = request.endsPin && samePin(state.pin, request.endsPin) ? state.pin : undefined;
    const pinned = request.dryRun || ending ? undefined : pinnedRefusal(state.pin, revision, env.name);
    if (pinned) return outcomeWithoutWork(revision, "Refused", pinned);
    const found = this.destination();
    if ("problem" in found)
      return this.fx.reportDestination(revision, state, request.trigger, request.actor, found.problem);
    if (!request.dryRun) {
      // The gate answers before anything is said or handed over; syncRevision asks it again
      // immediately before the first write.
      const decision = await this.fx.gate.check({
        path: "manual",
        revision,
        trigger: request.trigger,
        actor: request.actor,
        ignoreFreeze: request.ignoreFreeze,
        needsApproval,
        state,
      });
      if (!decision.allowed) return this.fx.refuseManual(decision, revision, request.trigger, request.actor);
      if (this.o.standby?.()) return this.handOver({ ...request, needsApproval }, revision);
    }
    return syncRevision(this.fx, revision, request.trigger, request.actor, {
      prune: request.prune ?? policy.prune,
      force: request.force,
      dryRun: request.dryRun,
      overridePruneLimit: request.overridePruneLimit,
      allowEmpty: request.allowEmpty,
      confirmPrune: request.confirmPrune,
      pinned: Boolean(request.revision || state.pin),
      onProgress: request.onProgress,
      path: "manual",
      ignoreFreeze: request.ignoreFreeze,
      needsApproval,
      ...(promotion ? { promotion } : {}),
      ...(request.note ? { note: request.note } : {}),
      ...(request.autoRollback ? { autoRollback: request.autoRollback } : {}),
      ...(request.rollback ? { rollback: request.rollback } : {}),
      ...(ending ? { beforeFirstWrite: this.pinEnding(ending, revision) } : {}),
    });
  }

  /**
   * The revision a request that names none syncs: the branch head; for a promoted environment the
   * commit its rule takes, else the one it runs (a re-sync), else none (refused, saying why).
   */
  private async revisionFor(
    state: EnvironmentState,
  ): Promise<
    | { revision: string; promotion?: PromotionNote }
    | { revision?: undefined; head: string; refusal: GateDecision & { allowed: false } }
  > {
    const head = await this.o.source.head(this.o.env.source.branch);
    // A pin holds a manual sync without a revision too: it re-deploys the pinned one.
    const taken = await revisionFromBranch(this.fx.promotion, async () => head, state);
    if (taken.revision) return { revision: taken.revision, ...(taken.note ? { promotion: taken.note } : {}) };
    if (state.lastSyncedRevision) return { revision: state.lastSyncedRevision };
    return {
      head,
      refusal: {
        allowed: false,
        check: "checks",
        reason: `refused: ${this.o.env.name} deploys only commits its upstreams have proven, and none is yet (${taken.waiting ?? "no evidence"})`,
      },
    };
  }

  /**
   * `/promote`, `app promote`: deploys the commit the upstream runs now, once proven, through the
   * same gate as any release (a gated environment waits for approval). promotion/promote.ts.
   */
  promote(request: {
    trigger: Trigger;
    actor: string;
    actorId?: number;
    /** "/promote prod by @alice" */
    reason: string;
    /** A request from GitHub (not the CLI): a gated environment's approval applies. */
    fromGitHub: boolean;
  }): Promise<PromoteResult> {
    return promoteWith(this.fx.promotion, this, this.o.source, this.o.env, request);
  }

  /** Writes the request for the lease holder (its state watch runs it); this replica applies nothing. */
  private async handOver(
    request: ManualSync,
    revision: string,
  ): Promise<SyncOutcome & { handedOver: boolean }> {
    await this.o.store.update(this.instance, (s) => {
      s.handedOver = {
        revision,
        trigger: request.trigger,
        actor: request.actor,
        requestedAt: new Date().toISOString(),
        prune: request.prune,
        force: request.force,
        ignoreFreeze: request.ignoreFreeze,
        ...(request.needsApproval === false ? { needsApproval: false } : {}),
        ...(request.allowEmpty ? { allowEmpty: true } : {}),
        ...(request.confirmPrune ? { confirmPrune: true } : {}),
        ...(request.endsPin ? { endsPin: request.endsPin } : {}),
      };
    });
    return {
      ...outcomeWithoutWork(
        revision,
        "Succeeded",
        `handed to the replica that holds the lease of app ${this.o.app}; its check run shows the result`,
      ),
      handedOver: true,
    };
  }

  /** Runs a sync another replica handed over (see HandedOverSync), once, before the pass. */
  private async runHandedOver(waiting: HandedOverSync): Promise<void> {
    await this.o.store.update(this.instance, (s) => {
      if (s.handedOver?.requestedAt === waiting.requestedAt) s.handedOver = undefined;
    });
    const outcome = await this.syncNow(waiting);
    this.o.log.info(
      { instance: this.instance, revision: waiting.revision, actor: waiting.actor, phase: outcome.phase },
      "ran a sync handed over by another replica",
    );
  }

  /** Freeze or unfreeze (durable); freezing turns automated sync and self-heal off. */
  async setFreeze(freeze: { by: string; reason: string } | undefined): Promise<EnvironmentState> {
    // Serialized with passes: once this returns, no pass that read the old policy is still running.
    const state = await this.serialize(() =>
      this.o.store.update(this.instance, (s) => {
        s.freeze = freeze
          ? { by: freeze.by, reason: freeze.reason, at: new Date().toISOString() }
          : undefined;
      }),
    );
    // The loop (wherever it runs) picks the change up; a one-shot CLI process must not heal itself.
    if (!freeze && this.looping) this.nudge("cli", "syncward");
    return state;
  }

  async setPolicy(
    policy: { automated: boolean; prune: boolean; selfHeal: boolean; by: string } | undefined,
  ): Promise<EnvironmentState> {
    const state = await this.serialize(() =>
      this.o.store.update(this.instance, (s) => {
        s.policyOverride = policy ? { ...policy, at: new Date().toISOString() } : undefined;
      }),
    );
    if (this.looping) this.nudge("cli", policy?.by ?? "syncward");
    return state;
  }

  /**
   * Re-deploys the revision of the history entry `target` names (an id, or a commit: its newest
   * successful entry; default: the newest successful one of another revision) and pins the
   * environment there (PinRecord). `app rollback` and `/rollback` both come here. The gate answers first: a
   * refusal pins nothing. The pin is written before the sync, so no automated pass in between
   * moves the environment back to the branch head; a sync that then fails leaves the pin (the
   * passes retry the pinned revision). `refused`: no such entry; nothing changed.
   */
  async rollback(request: {
    actor: string;
    target?: RollbackTarget;
    reason?: string;
    trigger?: Trigger;
    needsApproval?: boolean;
    onProgress?: SyncRequest["onProgress"];
    autoRollback?: AutoRollbackNote;
  }): Promise<(SyncOutcome & { pin?: PinRecord; handedOver?: boolean }) | { refused: string }> {
    const state = await this.o.store.load(this.instance);
    const target = rollbackTarget(state.history, state.lastSyncedRevision, this.o.env.name, request.target);
    if ("error" in target) return { refused: target.error };
    const from = rolledBackFrom(state, request.autoRollback?.from);
    const pin = pinOf(target.entry, request.actor, request.reason ?? "", new Date(), from);
    const trigger = request.trigger ?? "rollback";
    const needsApproval = request.needsApproval ?? false;
    // Held to the pin it is about to set: refused before anything is pinned when the commit no
    // longer renders what that entry applied.
    const decision = await this.fx.gate.check({
      path: "manual",
      revision: pin.revision,
      trigger,
      actor: request.actor,
      needsApproval,
      state,
      pin,
    });
    if (!decision.allowed && decision.check === "pin")
      return { refused: decision.reason.replace(/; nothing was written$/, "; nothing was pinned") };
    if (!decision.allowed) return this.fx.refuseManual(decision, pin.revision, trigger, request.actor);
    await this.serialize(() =>
      this.o.store.update(this.instance, (s) => {
        s.pin = pin;
        // Approvals and waits of other commits were given without the pin in view: withdrawn, so
        // that nothing approved before it (a wait for its upstreams' proof too) ends it; the next
        // pass asks for approval anew, saying what approving ends.
        s.pendingApprovals = s.pendingApprovals.filter((a) => a.sha === pin.revision);
        if (s.pendingSync && s.pendingSync.revision !== pin.revision) s.pendingSync = undefined;
      }),
    );
    const outcome = await this.sync({
      trigger,
      actor: request.actor,
      needsApproval,
      onProgress: request.onProgress,
      note: rollbackNote(pin),
      ...(request.autoRollback ? { autoRollback: request.autoRollback } : { rollback: rollbackNoteOf(pin) }),
    });
    return { ...outcome, pin };
  }

  /** Removes the pin (a history entry says so); the next pass syncs the branch head. */
  async unpin(actor: string): Promise<PinRecord | undefined> {
    let removed: PinRecord | undefined;
    await this.serialize(() =>
      this.o.store.update(this.instance, (s) => {
        removed = s.pin;
        if (!removed) return;
        // Straight into history, not through fx.record: nothing ran, so the health stays as it was.
        this.dropPin(s, actor, unpinMessage(removed, actor, this.o.env.source.branch));
      }),
    );
    if (removed && this.looping) this.nudge("cli", actor);
    return removed;
  }

  /**
   * A person asks for a sync of a gated environment (`/sync prod`, the Sync button). The gate
   * answers first: `held` when it waits for approval (recorded once per revision), `refused` with
   * the reason when anything else stops it (nothing is started then); otherwise it runs.
   */
  async requestApprovedSync(request: {
    trigger: Trigger;
    actor: string;
    /** The requester's GitHub id: they may not approve what they asked for, under any login. */
    actorId?: number;
    prune?: boolean;
    force?: boolean;
    allowEmpty?: boolean;
    confirmPrune?: boolean;
    /** The revision to sync (a promotion's); absent: what revisionFor takes. */
    revision?: string;
    promotion?: PromotionNote;
  }): Promise<{ revision: string; held: boolean; refused?: string }> {
    const requested = request.revision
      ? { revision: request.revision }
      : await this.revisionFor(await this.o.store.load(this.instance));
    if ("refusal" in requested) {
      await this.fx.refuseManual(requested.refusal, requested.head, request.trigger, request.actor);
      return { revision: requested.head, held: false, refused: requested.refusal.reason };
    }
    const revision = requested.revision;
    // Pinned elsewhere: no approval is asked of a revision the pin would refuse once approved (on
    // a gated environment a newer commit of the branch may end the pin: its wait says so).
    const verdict = await this.pinVerdict(await this.o.store.load(this.instance), revision);
    if ("refusal" in verdict) return { revision, held: false, refused: verdict.refusal };
    const flags = {
      prune: request.prune,
      force: request.force,
      ...(request.allowEmpty ? { allowEmpty: true } : {}),
      ...(request.confirmPrune ? { confirmPrune: true } : {}),
    };
    const decision = await this.fx.gate.check({
      path: "manual",
      revision,
      trigger: request.trigger,
      actor: request.actor,
      needsApproval: true,
      wait: {
        manual: true,
        ...flags,
        ...(request.actorId === undefined ? {} : { actorId: request.actorId }),
      },
      ...(verdict.note ? { waitNote: verdict.note } : {}),
    });
    if (!decision.allowed) {
      if (decision.check === "approval") return { revision, held: true };
      await this.fx.refuseManual(decision, revision, request.trigger, request.actor);
      return { revision, held: false, refused: decision.reason };
    }
    this.syncInBackground({
      trigger: request.trigger,
      actor: request.actor,
      revision,
      ...flags,
      ignoreFreeze: false,
      needsApproval: true,
      ...(request.promotion ? { promotion: request.promotion } : {}),
    });
    return { revision, held: false };
  }

  /**
   * Records an approval of `revision` by `by` (the caller checked who may approve; `id` is their
   * GitHub user id). When it completes the approvals, the gate is asked before anything is said:
   * `refused` carries its reason (a freeze, a closed window) and nothing runs; otherwise the held
   * sync runs, an automated one through the loop, a requested one as the manual sync it was.
   */
  async approve(
    revision: string,
    by: string,
    id?: number,
    /** The last synced revision the approver's eligibility was judged against ("" for none). */
    base?: string,
    /** Who contributed was not looked at (approval.allowAuthor was true). */
    unchecked?: boolean,
  ): Promise<Approved> {
    const { state, render } = await this.recordApproval(revision, { by, id, base, unchecked });
    const counted = await this.countApprovals(state, revision, render);
    if (counted.approvers.length < counted.needed) return { ...counted, released: false };
    // A promoted environment deploys only what its upstreams proved: the approval waits until then.
    const evidence = await this.fx.promotion?.evidenceOf(revision, `approved by @${by}`);
    if (evidence && !evidence.proven)
      return { ...counted, ...(await this.awaitProof(revision, evidence.text)) };
    const done = await this.releaseApproved(revision, by, evidence?.note);
    return { ...counted, released: done.refused === undefined, ...done };
  }

  /**
   * Adds the approval to the state, bound to the configuration it was judged under and the render
   * it was shown (a later config change, or a render of the commit that differs, stops it counting).
   */
  private async recordApproval(
    revision: string,
    who: { by: string; id?: number; base?: string; unchecked?: boolean },
  ): Promise<{ state: EnvironmentState; render: string }> {
    const render = await this.renderApproved(revision);
    const state = await this.o.store.update(this.instance, (s) => {
      addApproval(s, {
        sha: revision,
        by: who.by,
        ...(who.id !== undefined ? { id: who.id } : {}),
        at: new Date().toISOString(),
        ...(who.base !== undefined ? { base: who.base } : {}),
        ...(who.unchecked ? { unchecked: true as const } : {}),
        config: approvedConfigOf(this.env),
        render,
      });
    });
    return { state, render };
  }

  /**
   * Who approved `revision` and still counts under the rules in force (while pinned elsewhere,
   * only approvals given after the pin), how many are needed, how many lapsed.
   */
  private async countApprovals(
    state: EnvironmentState,
    revision: string,
    render: string,
  ): Promise<{ approvers: string[]; needed: number; expired: number }> {
    const rules = (await this.fx.gate.rules(state)).rules;
    const { approvers, expired } = approvalsOf(
      countableApprovals(state, revision).state,
      revision,
      new Date(),
      rules.approval?.expiresAfter,
      !rules.approval?.allowAuthor,
      await this.fx.gate.base(state),
      approvedConfigOf(this.env),
      render,
    );
    return { approvers, needed: rules.approval?.minimum ?? 0, expired };
  }

  /** Approved in full before its upstreams proved it: kept on the wait, released by the pass that finds it proven. */
  private async awaitProof(
    revision: string,
    evidence: string,
  ): Promise<Pick<Approved, "released" | "waiting">> {
    await this.o.store.update(this.instance, (s) => {
      if (s.pendingSync?.revision === revision) s.pendingSync.approvedAwaitingProof = true;
    });
    return {
      released: false,
      waiting: `its upstreams have not proven it yet (${evidence}); it deploys once they have, without another approval`,
    };
  }

  /**
   * Releases the sync an approval completed. The gate answers first: `refused` carries its reason
   * (a freeze, a closed window, a pin it does not end) and nothing runs. A requested sync runs as
   * the manual sync it was, an automated one through the loop; on a pinned environment the
   * approved commit is synced as a person's request that ends the pin (ManualSync.endsPin): the
   * pin goes only once the gate let that sync's first write through. `by`: who the release is
   * attributed to (absent: the last approver the gate counted).
   */
  private async releaseApproved(
    revision: string,
    by: string | undefined,
    promotion?: PromotionNote,
  ): Promise<{ refused?: string; endedPin?: PinRecord }> {
    const state = await this.o.store.load(this.instance);
    const verdict = await this.pinVerdict(state, revision);
    if ("refusal" in verdict) return { refused: verdict.refusal };
    const pending = state.pendingSync?.revision === revision ? state.pendingSync : undefined;
    const manual = Boolean(pending?.manual);
    const trigger = manual && pending ? pending.trigger : "comment";
    const pin = state.pin && state.pin.revision !== revision ? state.pin : undefined;
    const decision = await this.fx.gate.check({
      // Ending a pin is a person's act (the machine writes nothing but the pinned revision).
      path: manual || pin ? "manual" : "automated",
      revision,
      trigger,
      actor: by ?? "syncward",
      needsApproval: true,
      state,
    });
    const actor = by ?? (decision.allowed ? decision.approvals?.at(-1) : undefined) ?? "syncward";
    if (!decision.allowed) {
      await this.fx.refuseManual(decision, revision, trigger, actor);
      return { refused: decision.reason };
    }
    const few = pin ? await this.pinEndShort(state, pin, revision, decision.approvals ?? []) : undefined;
    if (few) return { refused: few };
    const request: ManualSync = {
      trigger,
      actor: manual && pending ? pending.actor : actor,
      revision,
      prune: pending?.prune,
      force: pending?.force,
      allowEmpty: pending?.allowEmpty,
      confirmPrune: pending?.confirmPrune,
      needsApproval: true,
      ...(promotion ? { promotion } : {}),
      ...(pin ? { endsPin: pin } : {}),
    };
    if (pin) {
      this.syncInBackground(request);
      return { endedPin: pin };
    }
    if (manual) this.syncInBackground(request);
    else this.nudge("comment", actor);
    return {};
  }

  /**
   * Why the approvals the gate counted do not end `pin` (pinEndApprovalsRefusal): fewer than the
   * stricter rule's minimum, or none. Undefined: they end it.
   */
  private async pinEndShort(
    state: EnvironmentState,
    pin: PinRecord,
    revision: string,
    approvers: readonly string[],
  ): Promise<string | undefined> {
    const minimum = (await this.fx.gate.rules(state)).rules.approval?.minimum;
    return pinEndApprovalsRefusal(pin, revision, this.o.env.name, approvers, minimum);
  }

  /**
   * An approval that waited for its upstreams' proof (approvedAwaitingProof): once they have proven
   * the commit, released as the approval would have been; the mark is cleared either way it ends.
   * It is credited to the approvals that count now (not one that lapsed meanwhile).
   */
  private async releaseProven(revision: string): Promise<void> {
    const state = await this.o.store.load(this.instance);
    const counted = await this.countApprovals(state, revision, await this.renderApproved(revision));
    const by = counted.approvers.at(-1);
    const evidence = await this.fx.promotion?.evidenceOf(revision, by ? `approved by @${by}` : "approved");
    if (!evidence?.proven) return;
    await this.o.store.update(this.instance, (s) => {
      if (s.pendingSync?.revision === revision) s.pendingSync.approvedAwaitingProof = undefined;
    });
    const done = await this.releaseApproved(revision, by, evidence.note);
    this.o.log.info(
      { instance: this.instance, revision, refused: done.refused },
      "an approval that waited for its upstreams' proof is released",
    );
  }

  /**
   * The release of an approved commit ending `pin` (ManualSync.endsPin), once the gate let its
   * first write through: the pin is removed by a history entry naming the approvers the gate
   * counted. A refusal (too few approvals, another pin since) stops the release before it writes;
   * the pin then stays.
   */
  private pinEnding(pin: PinRecord, revision: string): ReleaseOptions["beforeFirstWrite"] {
    return async (approvers) => {
      const state = await this.o.store.load(this.instance);
      const few = await this.pinEndShort(state, pin, revision, approvers);
      if (few) return few;
      if (await this.endPinByApproval(pin, revision, approvers)) return undefined;
      return `refused: ${this.o.env.name} was pinned again since ${short(revision)} was approved (another rollback); that pin stays`;
    };
  }

  /**
   * Ends `pin` for the approved `revision`, a history entry naming the approvers and the commit;
   * false when another pin stands now (a rollback since), which this approval does not end.
   */
  private async endPinByApproval(
    pin: PinRecord,
    revision: string,
    approvers: readonly string[],
  ): Promise<boolean> {
    let ended = true;
    await this.o.store.update(this.instance, (s) => {
      ended = true;
      if (!s.pin) return;
      if (s.pin.at !== pin.at || s.pin.revision !== pin.revision) {
        ended = false;
        return;
      }
      this.dropPin(s, approvers.join(", ") || "syncward", pinEndedMessage(pin, revision, approvers));
    });
    return ended;
  }

  /** Removes the state's pin with a history entry (trigger `unpin`): nothing ran, so the health stays. */
  private dropPin(s: EnvironmentState, actor: string, message: string): void {
    const pin = s.pin;
    if (!pin) return;
    const outcome = outcomeWithoutWork(pin.revision, "Succeeded", message);
    appendHistory(s, historyEntryOf("unpin", actor, outcome), this.o.env.revisionHistoryLimit);
    s.pin = undefined;
  }

  /**
   * The render an approval of `revision` binds: the one its wait announced (what the approver was
   * shown), else what it renders now. "" (binding nothing) when neither can be had.
   */
  private async renderApproved(revision: string): Promise<string> {
    const wait = (await this.o.store.load(this.instance)).pendingSync;
    if (wait?.revision === revision && wait.render !== undefined) return wait.render;
    return this.fx.desiredAt(revision).then(
      (r) => renderSeen(r.objects, this.o.env.destination.namespace).digest,
      () => "",
    );
  }

  /** `/unapprove`: withdraws `by`'s approvals of revisions not yet deployed; returns those revisions. */
  async unapprove(by: { login: string; id?: number }): Promise<string[]> {
    let withdrawn: string[] = [];
    await this.serialize(() =>
      this.o.store.update(this.instance, (s) => {
        withdrawn = withdrawApproval(s, by);
      }),
    );
    return withdrawn;
  }

  /** A sync nobody awaits: its failure to finish (a stop, the state unreachable) is logged, not thrown. */
  private syncInBackground(request: ManualSync): void {
    this.sync(request).catch((err: unknown) =>
      this.o.log.warn(
        { err, instance: this.instance, revision: request.revision },
        "a requested sync did not finish",
      ),
    );
  }

  /** What Git declares vs what runs, without changing anything (for `app get`, `app diff`, previews). */
  async inspect(revision?: string): Promise<{
    revision: string;
    assessment: Awaited<ReturnType<typeof assess>>;
    rendered: RenderedSource;
    state: EnvironmentState;
  }> {
    const state = await this.o.store.load(this.instance);
    const sha = revision
      ? await this.o.source.resolve(revision)
      : trackedRevision(await this.o.source.head(this.o.env.source.branch), state.pin);
    const rendered = await this.fx.desiredAt(sha);
    const policy = effectivePolicy(this.o.env, state);
    const assessment = await assess(
      this.o.client,
      this.fx.target,
      this.fx.request(sha, rendered.objects, policy.prune, state),
    );
    return { revision: sha, assessment, rendered, state };
  }
}
