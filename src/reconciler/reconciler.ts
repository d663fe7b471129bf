// All environments of one app, each guarded by its own controller. With leases on (the default
// for the controller process and the GitHub App), a replica runs an app's controllers only while
// it holds the app's Lease, so two replicas never operate on one environment at once; which
// replica tries for which app is the shard's call (shard.ts: balanced across the live replicas),
// and when a replica dies another takes the app over within the lease duration.
import { applyFloors, type Floor, floorsFromEnv } from "../config/floors.ts";
import { findEnvironment } from "../config/load.ts";
import {
  destinationName,
  type EnvironmentConfig,
  type ResourceCustomizations,
  type SyncwardConfig,
} from "../config/types.ts";
import { compileHealthChecks } from "../engine/health/index.ts";
import type { ScriptBudget } from "../engine/health/lua-script.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Destination } from "../kube/clusters.ts";
import { serviceAccountUser } from "../kube/impersonation.ts";
import { legacyInstanceName } from "../state/identity.ts";
import { LeaseLock, leaseNameFor } from "../state/lease.ts";
import { INSTANCE_ANNOTATION, StateStore } from "../state/store.ts";
import type { HandedOverPush, HandedOverRepositoryEvent, Trigger } from "../state/types.ts";
import { sleep } from "../util/sleep.ts";
import { EnvironmentController, instanceName, type Logger } from "./environment-controller.ts";
import type { Emit } from "./events.ts";
import { awaitsSync, handedOverOf } from "./handed-over-push.ts";
import { type LegacyName, upgradeIdentity } from "./identity-upgrade.ts";
import { type PassSlots, processPassSlots } from "./pass-slots.ts";
import { promotionOptions } from "./promotion/promotion.ts";
import type { RequiredChecks } from "./required-checks.ts";
import type { RevisionSource } from "./revision-source.ts";
import { Shard, type ShardedApp } from "./shard.ts";
import { watchStates } from "./state-watch.ts";

export interface ReconcilerOptions {
  /** The app's identity (state/identity.ts): every name in the cluster is built from it. */
  app: string;
  /** The readable name (`owner/repo`) of the app, recorded beside its state for people. */
  repository?: string;
  /**
   * The app's name before identities: its state is moved to the identity's names before any
   * environment runs (identity-upgrade.ts). Absent: nothing to move.
   */
  legacy?: LegacyName;
  config: SyncwardConfig;
  /** syncward's own cluster: state, leases, and the environments that name no cluster. */
  client: KubeClient;
  /** Where each environment's destination cluster resolves (kube/clusters.ts); absent: `client` for all. */
  clusters?: ClusterResolver;
  source: RevisionSource;
  emit: Emit;
  log: Logger;
  /** Namespace of syncward's own state and leases. */
  stateNamespace: string;
  /** Who this replica is, in Lease holder identities. */
  identity: string;
  leases?: boolean;
  leaseDurationSeconds?: number;
  /**
   * The process's shard, shared by all its apps, which decides which app Leases this replica
   * tries for. Without one (a process with a single app), the reconciler makes its own.
   */
  shard?: Shard;
  pollIntervalMs?: number;
  watch?: boolean;
  /**
   * Another replica received a push that changed the config (seen in a handed-over push): the
   * GitHub runtime reads it again, so whichever replica runs the app runs the new config.
   */
  onConfigPushed?: () => void;
  /**
   * Another replica was told the repository is gone or renamed (seen in a state it handed over,
   * or on taking the app's Lease): the GitHub runtime stops the app here too (and follows a rename).
   */
  onRepositoryEvent?: (event: HandedOverRepositoryEvent) => void;
  /** Operator floors no repository can lower (default: from the environment, see floors.ts). */
  floors?: Floor[];
  /** requireChecks: which checks passed on a revision (GitHub's adapter). */
  checks?: RequiredChecks;
  /** How many environment passes run at once (default: the process's, shared by every app; pass-slots.ts). */
  passes?: PassSlots;
  /** The operator's custom health checks for this app's project (projects/health-checks.ts); never the repository's. */
  healthChecks?: ResourceCustomizations;
  /** The budget of one health script call (default lua-script.ts's DEFAULT_BUDGET). */
  healthBudget?: ScriptBudget;
}

/** What the reconciler asks of kube/clusters.ts: an environment's client, and word of changes. */
export interface ClusterResolver {
  /** Throws UnknownDestinationError (before any request) when the destination names no known cluster. */
  clientFor(destination: Destination): KubeClient;
  onChange?(listener: (names: string[]) => void): () => void;
}

export class Reconciler implements ShardedApp {
  readonly store: StateStore;
  private readonly controllers = new Map<string, EnvironmentController>();
  private lock: LeaseLock | undefined;
  private readonly abort = new AbortController();
  private readonly running = new Set<string>();
  private deferring = false;
  private shard: Shard | undefined;
  private ownShard = false;
  private claiming: Promise<boolean> | undefined;
  private releasing: Promise<void> | undefined;
  /** `at` of the last handed-over push acted on, per instance, so a state write does not repeat it. */
  private readonly pushesSeen = new Map<string, string>();
  /** `at` of the pushes this reconciler handed over itself, which its own state watch then sees. */
  private readonly handedOverHere = new Set<string>();
  /** While the app is being taken over: the pushes state writes brought meanwhile, newest last. */
  private arriving: Array<[EnvironmentController, HandedOverPush, boolean]> | undefined;
  private readonly createdAt = new Date().toISOString();
  /** `at` of the repository event acted on, so a state write or a claim does not repeat it. */
  private repositoryEventSeen?: string;

  constructor(private readonly o: ReconcilerOptions) {
    this.store = new StateStore(o.client, o.stateNamespace, { repository: o.repository });
    const health = compileHealthChecks(o.healthChecks, o.healthBudget);
    const floors = o.floors ?? floorsFromEnv();
    const passes = o.passes ?? processPassSlots();
    for (const configured of o.config.environments) {
      const env = applyFloors(configured, floors);
      this.controllers.set(
        env.name,
        new EnvironmentController({
          app: o.app,
          env,
          // Resolved at every use, so a cluster Secret added or rotated later is used without a restart.
          get client() {
            return writerFor(o.clusters ? o.clusters.clientFor(env.destination) : o.client, env);
          },
          stateClient: o.client,
          store: this.store,
          source: o.source,
          emit: o.emit,
          log: o.log.child?.({ app: o.app, environment: env.name }) ?? o.log,
          pollIntervalMs: o.pollIntervalMs,
          watch: o.watch,
          health,
          checks: o.checks,
          passes,
          standby: () => this.standby(env.name),
          reservedNamespaces: [o.stateNamespace],
          ...promotionOptions(o.config.environments, env.name),
        }),
      );
    }
  }

  /** A cluster Secret changed: the environments deploying there look again (a pass resolves anew). */
  private followClusters(): void {
    const stop = this.o.clusters?.onChange?.((names) => {
      for (const c of this.controllers.values()) {
        const name = destinationName(c.env.destination);
        if (name !== undefined && names.includes(name) && this.running.has(c.env.name))
          c.nudge("poll", "syncward");
      }
    });
    if (stop) this.abort.signal.addEventListener("abort", stop, { once: true });
  }

  get environments(): EnvironmentController[] {
    return [...this.controllers.values()];
  }

  /** The controller of an environment; an unknown name throws with a "did you mean". */
  controller(name: string): EnvironmentController {
    const env = findEnvironment(this.o.config, name);
    return this.controllers.get(env.name) as EnvironmentController;
  }

  /**
   * This replica does not hold the app's lease (another does, or the shard has not given it the
   * app yet, or it lost it): until it takes the lease, it writes nothing and hands requests and
   * pushes over through the state ConfigMap. Before start() it serves requests as a replica
   * without leases would (the CLI's case).
   */
  get following(): boolean {
    return this.deferring;
  }

  /** Why this replica must not write to `env` now (another replica holds the lease), or undefined. */
  private standby(env: string): string | undefined {
    if (this.o.leases === false || this.running.has(env) || !this.deferring) return undefined;
    return `this replica (${this.o.identity}) does not hold the lease of app ${this.o.app}; the replica that holds it runs its syncs, so nothing was changed here`;
  }

  /** Names of the environments this replica is acting on now. */
  get active(): string[] {
    return [...this.running];
  }

  /**
   * Without leases: moves the app's state, then starts its environments. A failure (an API server
   * that hung up) is tried again with backoff, so the app runs once the move can be made; until
   * then nothing of it runs, as nothing may write under two names.
   */
  private async upgradeThenStart(): Promise<void> {
    for (let wait = 500; !this.abort.signal.aborted; wait = Math.min(wait * 2, 30_000)) {
      try {
        await this.upgrade();
        if (!this.abort.signal.aborted) this.startAll();
        return;
      } catch (err) {
        this.o.log.error(
          { err, app: this.o.app },
          "could not move the app's state: nothing runs until it can; trying again",
        );
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }

  start(): void {
    if (this.o.leases === false) {
      if (!this.o.legacy) this.startAll();
      else void this.upgradeThenStart();
    } else {
      this.ownShard = !this.o.shard;
      this.shard =
        this.o.shard ??
        new Shard({
          client: this.o.client,
          namespace: this.o.stateNamespace,
          identity: this.o.identity,
          leaseDurationSeconds: this.o.leaseDurationSeconds,
          log: this.o.log,
          settleMs: 0,
        });
      this.deferring = true;
      this.shard.register(this);
    }
    if (this.o.watch !== false) this.watchState();
    this.followClusters();
  }

  private startAll(): void {
    for (const [name, controller] of this.controllers) {
      this.running.add(name);
      controller.start();
    }
  }

  private async stopAll(): Promise<void> {
    this.running.clear();
    await Promise.all(this.environments.map((c) => c.stop()));
  }

  /**
   * A freeze, unfreeze or policy change made elsewhere (the CLI, another replica's GitHub handler)
   * lands in the state ConfigMap: the environment acting here looks again at once.
   */
  private watchState(): void {
    const byInstance = new Map(this.environments.map((c) => [c.instance, c]));
    const stop = watchStates(this.o.client, this.o.stateNamespace, [...byInstance.keys()], (obj) => {
      const controller = byInstance.get(obj.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "");
      if (!controller) return;
      const handed = handedOverOf(obj as { data?: Record<string, string> });
      if (handed.repositoryEvent && this.hearRepositoryEvent(handed.repositoryEvent)) return;
      const found = handed.push;
      const push = found && !this.handedOverHere.has(found.at) ? found : undefined;
      // A config pushed since this runtime read its own: every replica reads it again (the
      // rebuilt runtime, if it holds the app, then acts on the push from state).
      if (push?.config && push.at > this.createdAt && this.o.onConfigPushed) {
        this.handedOverHere.add(push.at);
        this.o.onConfigPushed();
        return;
      }
      if (!this.running.has(controller.env.name)) {
        // Taking the app over: a push handed over after its state was read is acted on once running.
        if (found && this.arriving) this.arriving.push([controller, found, handed.awaiting === true]);
        return;
      }
      // A record that a later sync superseded (the holder took the app after it) is not a push.
      const acted = push && handed.awaiting && this.actOnPush(controller, push, true);
      if (!acted) controller.nudge("poll", "syncward");
    });
    this.abort.signal.addEventListener("abort", stop, { once: true });
  }

  get leaseName(): string {
    return appLeaseName(this.o.app);
  }

  get app(): string {
    return this.o.app;
  }

  /**
   * Holds the app's Lease: runs its environments (its renewals have not failed for good), or is
   * handing it back and letting a sync under way finish.
   */
  get holding(): boolean {
    return this.o.leases !== false && (this.running.size > 0 || this.releasing !== undefined);
  }

  /**
   * Tries for the app's Lease (one per app: a renewal every few seconds per app, not per
   * environment); once held, runs every environment of the app, first acting on pushes that were
   * handed over while nobody here held it. Called by the shard when this replica is to take the app.
   */
  claim(): Promise<boolean> {
    this.claiming ??= this.takeLease().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async takeLease(): Promise<boolean> {
    if (this.abort.signal.aborted || this.releasing) return false;
    if (this.holding) return true;
    const shard = this.shard as Shard;
    this.lock ??= new LeaseLock(this.o.client, this.o.stateNamespace, this.leaseName, this.o.identity, {
      leaseDurationSeconds: shard.leaseDurationSeconds,
      sightings: shard.sightings,
    });
    const lock = this.lock;
    try {
      if (!(await lock.tryAcquire())) {
        this.deferring = true;
        return false;
      }
    } catch (err) {
      this.o.log.warn({ err, app: this.o.app }, "lease: could not contend");
      return false;
    }
    if (this.abort.signal.aborted) {
      await lock.release().catch(() => undefined);
      return false;
    }
    if (!(await this.upgradeHolding())) {
      await lock.release().catch(() => undefined);
      this.deferring = true;
      return false;
    }
    this.o.log.info({ app: this.o.app, identity: this.o.identity }, "lease acquired; reconciling");
    // Heads this replica learned while another ran the app may be older than what that one deployed.
    this.o.source.forgetHeads?.();
    // From before the state is read until the environments run, the watch's pushes are kept.
    this.arriving = [];
    const { found, repositoryEvent } = await this.handedOver();
    const arrived = this.arriving;
    this.arriving = undefined;
    if (repositoryEvent) {
      // The repository went (or moved) while nobody here ran it: nothing starts under this name.
      await lock.release().catch(() => undefined);
      this.hearRepositoryEvent(repositoryEvent);
      return false;
    }
    this.deferring = false;
    this.startAll();
    this.takeUpHandedOver([...found, ...arrived]);
    lock.start(() => void this.lost());
    return true;
  }

  /**
   * On taking the app over: each handed-over push that still waits for a sync is acted on as that
   * push (its trigger and actor), in the order they were seen, but its commit is not taken for the
   * branch head: the record may be older than what the last holder deployed or held for approval
   * (it judged on its own history, and a sync killed midway left none), so the first passes ask
   * the source where the branch is. A config push is recorded in every environment's state: each
   * takes up its own branch's.
   */
  private takeUpHandedOver(found: Array<[EnvironmentController, HandedOverPush, boolean]>): void {
    for (const [controller, push, awaiting] of found)
      if (awaiting && push.branch === controller.env.source.branch) this.actOnPush(controller, push, false);
  }

  private async lost(): Promise<void> {
    this.deferring = true;
    await this.stopAll();
    if (this.abort.signal.aborted) return;
    this.o.log.warn({ app: this.o.app, identity: this.o.identity }, "lease lost; stopped reconciling");
    this.shard?.poke();
  }

  /**
   * Hands the app back (the shard found this replica over its share): nothing new starts here
   * from now on (pushes and requests are handed over), a pass under way may finish within a
   * lease duration, then the environments stop and the Lease is released for another replica.
   */
  relinquish(): Promise<void> {
    this.releasing ??= this.handBack().finally(() => {
      this.releasing = undefined;
    });
    return this.releasing;
  }

  private async handBack(): Promise<void> {
    await this.claiming;
    if (this.running.size === 0) return;
    this.deferring = true;
    this.running.clear();
    this.o.log.info({ app: this.o.app, identity: this.o.identity }, "handing the app to another replica");
    const graceMs = (this.shard?.leaseDurationSeconds ?? 15) * 1000;
    await Promise.race([
      Promise.all(this.environments.map((c) => c.idle())),
      sleep(graceMs, this.abort.signal),
    ]);
    await this.stopAll();
    await this.lock
      ?.stop()
      .catch((err) => this.o.log.warn({ err, app: this.o.app }, "lease: could not release"));
  }

  /**
   * Moves the app's state from its name before identities (once per reconciler; a failure is
   * tried again next time). The CLI calls it before a command; start() and the lease do it first.
   */
  upgrade(): Promise<void> {
    const legacy = this.o.legacy;
    if (!legacy) return Promise.resolve();
    this.upgrading ??= upgradeIdentity({
      writer: (env) => writerFor(this.o.client, env),
      store: this.store,
      config: this.o.config,
      app: this.o.app,
      legacy,
      log: this.o.log,
    }).then(
      () => undefined,
      (err) => {
        this.upgrading = undefined;
        throw err;
      },
    );
    return this.upgrading;
  }

  private upgrading: Promise<void> | undefined;

  /**
   * The upgrade, run while holding the app's Lease and its old name's too, so that a replica from
   * before identities (a rolling upgrade) is not syncing the old name meanwhile. False when the old
   * Lease is held by another replica or the move failed: the app is tried again later.
   */
  private async upgradeHolding(): Promise<boolean> {
    const legacy = this.o.legacy;
    if (!legacy || this.upgrading)
      return this.upgrade().then(
        () => true,
        () => false,
      );
    const name = leaseNameFor(legacyInstanceName(legacy.app, "app"));
    const exists =
      name !== this.leaseName &&
      (await this.o.client
        .get("coordination.k8s.io/v1", "Lease", this.o.stateNamespace, name)
        .catch(() => undefined));
    const old = exists
      ? new LeaseLock(this.o.client, this.o.stateNamespace, name, `${this.o.identity}/upgrading`, {
          leaseDurationSeconds: this.shard?.leaseDurationSeconds,
          sightings: this.shard?.sightings,
        })
      : undefined;
    try {
      if (old && !(await old.tryAcquire())) {
        this.o.log.info(
          { app: this.o.app, lease: name },
          "the app's old name is still held: moving its state later",
        );
        return false;
      }
      await this.upgrade();
      return true;
    } catch (err) {
      this.o.log.error(
        { err, app: this.o.app },
        "could not move the app's state: it runs nowhere until it can",
      );
      return false;
    } finally {
      await old?.release().catch(() => undefined);
    }
  }

  standBy(): void {
    if (!this.holding) this.deferring = true;
  }

  /**
   * Read from state when this replica takes the app: handed-over pushes not yet synced, and a
   * repository event newer than this runtime.
   */
  private async handedOver(): Promise<{
    found: Array<[EnvironmentController, HandedOverPush, boolean]>;
    repositoryEvent?: HandedOverRepositoryEvent;
  }> {
    const found: Array<[EnvironmentController, HandedOverPush, boolean]> = [];
    let repositoryEvent: HandedOverRepositoryEvent | undefined;
    for (const controller of this.controllers.values()) {
      try {
        const state = await this.store.load(controller.instance);
        if (state.repositoryEvent && this.concerns(state.repositoryEvent))
          repositoryEvent = state.repositoryEvent;
        const push = state.handedOverPush;
        if (push) found.push([controller, push, awaitsSync(push, state)]);
      } catch (err) {
        // The first pass reads the branch head anyway: a level-triggered loop loses no push here.
        this.o.log.warn({ err, instance: controller.instance }, "could not read handed-over pushes");
      }
    }
    return { found, repositoryEvent };
  }

  /** A repository event recorded after this runtime was made (an older one predates a reinstall). */
  private concerns(event: HandedOverRepositoryEvent): boolean {
    return event.at > this.createdAt && this.o.onRepositoryEvent !== undefined;
  }

  /** Passes a repository event another replica handed over to the runtime, once; false when not ours. */
  private hearRepositoryEvent(event: HandedOverRepositoryEvent): boolean {
    if (!this.concerns(event)) return false;
    if (this.repositoryEventSeen !== event.at) {
      this.repositoryEventSeen = event.at;
      this.o.onRepositoryEvent?.(event);
    }
    return true;
  }

  /**
   * The repository is gone or renamed (this replica was told): recorded in every environment's
   * state, where each replica running the app hears it (its state watch, or its next claim of the
   * Lease) and stops the app. Resolves once every state holds it.
   */
  async handOverRepositoryEvent(
    event: Omit<HandedOverRepositoryEvent, "at">,
  ): Promise<HandedOverRepositoryEvent> {
    const record: HandedOverRepositoryEvent = { ...event, at: new Date().toISOString() };
    this.repositoryEventSeen = record.at;
    await Promise.all(
      this.environments.map((c) =>
        this.store.update(c.instance, (s) => {
          s.repositoryEvent = record;
        }),
      ),
    );
    return record;
  }

  /**
   * Acts on a push another replica handed over, once; false when it was already acted on. With
   * `learnHead`, its commit becomes the source's branch head (for every environment of the branch).
   */
  private actOnPush(controller: EnvironmentController, push: HandedOverPush, learnHead: boolean): boolean {
    if (this.pushesSeen.get(controller.instance) === push.at) return false;
    this.pushesSeen.set(controller.instance, push.at);
    // A config change recorded in every environment's state concerns only those on its branch.
    if (push.branch !== controller.env.source.branch) {
      controller.nudge("poll", "syncward");
      return true;
    }
    if (!push.revision) {
      controller.nudge(push.trigger, push.actor);
      return true;
    }
    if (learnHead) this.o.source.learnHead?.(push.branch, push.revision, push.before, push.title);
    controller.pushedBy({ after: push.revision, before: push.before, login: push.actor, id: push.actorId });
    controller.nudgePushed(push.revision, push.trigger, push.actor);
    return true;
  }

  /**
   * A push that reached this replica while another holds the app: recorded in the environment's
   * state, where the holder's state watch (or whoever takes the app next) picks it up.
   */
  private handOverPush(controller: EnvironmentController, record: HandedOverPush): void {
    this.handedOverHere.add(record.at);
    this.store
      .update(controller.instance, (s) => {
        s.handedOverPush = record;
      })
      .catch((err) =>
        this.o.log.warn(
          { err, instance: controller.instance },
          "could not hand a push over to the lease holder; its next poll finds the commit",
        ),
      );
  }

  /**
   * Asks an environment for a pass because something outside Git changed (checks finished on
   * GitHub). On a replica without the app's lease it is handed to the holder through the
   * environment's state, as a push without a commit (the holder's pass reads the branch head); a
   * push still waiting there keeps its trigger and actor, and a config push is left for the holder.
   */
  wake(name: string): void {
    const c = this.controller(name);
    if (this.standby(c.env.name) === undefined) {
      c.nudge("poll", "syncward");
      return;
    }
    const at = new Date().toISOString();
    this.handedOverHere.add(at);
    this.store
      .update(c.instance, (s) => {
        const prev = s.handedOverPush;
        const waiting = prev && prev.branch === c.env.source.branch && awaitsSync(prev, s) ? prev : undefined;
        if (waiting?.config) return;
        s.handedOverPush = {
          branch: c.env.source.branch,
          trigger: waiting?.trigger ?? "poll",
          actor: waiting?.actor ?? "syncward",
          at,
        };
      })
      .catch((err) =>
        this.o.log.warn(
          { err, instance: c.instance },
          "could not hand a wake-up over; the lease holder's poll covers it",
        ),
      );
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.shard?.unregister(this);
    await this.claiming;
    await Promise.all(this.environments.map((c) => c.stop()));
    await this.lock
      ?.stop()
      .catch((err) => this.o.log.warn({ err, app: this.o.app }, "lease: could not release"));
    this.running.clear();
    if (this.ownShard) await this.shard?.stop();
  }

  /**
   * A push to `branch`: nudges the environments tracking it. When the changed files are known,
   * only environments whose source path they touch are nudged (a monorepo push does not refresh
   * every app); `includes` names the directories an environment's source reads. `pushed` is where
   * the push moved the branch: the source learns it, and on a replica without the app's lease the
   * push is handed over through the environment's state instead (a config change always is, so
   * that every replica reads the config again). Returns the environments nudged.
   */
  nudgeBranch(
    branch: string,
    trigger: Trigger,
    actor: string,
    changed?: { files: string[]; includes: (env: string) => string[] },
    pushed?: { revision: string; before?: string; title?: string; config?: boolean; actorId?: number },
  ): string[] {
    const nudged: string[] = [];
    if (pushed) this.o.source.learnHead?.(branch, pushed.revision, pushed.before, pushed.title);
    // One record per push, the same in every environment it is handed to.
    const record: HandedOverPush = { branch, trigger, actor, ...pushed, at: new Date().toISOString() };
    // A config change is recorded in every environment's state, whichever replica holds the app:
    // the other replicas read the config again when they see it (see watchState).
    if (pushed?.config) for (const c of this.controllers.values()) this.handOverPush(c, record);
    for (const c of this.controllers.values()) {
      if (c.env.source.branch !== branch) continue;
      // Who pushed, for any environment of the branch (one the push did not touch may still
      // wait at this revision later): a pusher never approves their own push.
      if (pushed)
        c.pushedBy({ after: pushed.revision, before: pushed.before, login: actor, id: pushed.actorId });
      if (changed && !touches(changed.includes(c.env.name), changed.files)) continue;
      const elsewhere = this.standby(c.env.name) !== undefined;
      if (elsewhere && !pushed?.config) this.handOverPush(c, record);
      if (!elsewhere && pushed) c.nudgePushed(pushed.revision, trigger, actor);
      else if (!elsewhere) c.nudge(trigger, actor);
      nudged.push(c.env.name);
    }
    return nudged;
  }
}

/** The Lease of an app: one per app, whichever replica holds it runs all its environments. */
export function appLeaseName(app: string): string {
  return leaseNameFor(instanceName(app, "app"));
}

/**
 * Does a change to `files` affect a source whose content comes from `dirs` (the source path and
 * every local directory its kustomizations include)?
 */
export function touches(dirs: string[], files: string[]): boolean {
  const norm = dirs.map((d) => d.replace(/^\.\/?/, "").replace(/\/$/, ""));
  return files.some((f) => norm.some((dir) => dir === "" || f === dir || f.startsWith(`${dir}/`)));
}

/** The client of an environment: its writes impersonate its project's ServiceAccount, if any. */
export function writerFor(client: KubeClient, env: EnvironmentConfig): KubeClient {
  const sa = env.project?.serviceAccount;
  return sa ? client.writingAs(serviceAccountUser(sa.namespace, sa.name)) : client;
}
