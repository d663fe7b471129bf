// The guard of one environment. Level-triggered: every pass compares the tracked branch head and
// the live cluster with what Git declares and acts by policy; webhooks, polls, watch events and
// CLI calls only nudge it. Passes never overlap, and nudges during a pass coalesce into one more.

import { formatDuration } from "../config/duration.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import type { HealthChecks } from "../engine/health/index.ts";
import type { Plan } from "../engine/plan.ts";
import { errorMessage } from "../engine/resource-results.ts";
import { syncWithRetry } from "../engine/retry.ts";
import { compareOptionsFor, revertTrail } from "../engine/revert/index.ts";
import {
  assess,
  outcomeWithoutWork,
  type SyncOutcome,
  type SyncRequest,
  type SyncTarget,
  syncEnvironment,
} from "../engine/sync.ts";
import { clusterCapabilities } from "../kube/capabilities.ts";
import type { KubeClient } from "../kube/client.ts";
import { isTransient, KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { SourceError } from "../source/errors.ts";
import { type RenderedSource, type RenderOptions, render } from "../source/render.ts";
import type { RemoteChart } from "../source/render-helm.ts";
import { appendHistory } from "../state/history.ts";
import { healthAfter } from "../state/recorded-health.ts";
import { addRetried, type RetriedAttempts } from "../state/retried.ts";
import type { StateStore } from "../state/store.ts";
import type { EnvironmentState, HandedOverSync, HistoryEntry, Trigger } from "../state/types.ts";
import { Cached } from "../util/cached.ts";
import { ApprovalGate } from "./approval-gate.ts";
import { driftFight, healBackoffMs, isFight, nextHealAt, recordHeal } from "./drift-fight.ts";
import type { Emit } from "./events.ts";
import { findOrphans, mayBeOrphan, type Orphan, RISKY_KINDS } from "./orphans.ts";
import { effectivePolicy } from "./policy.ts";
import type { RevisionSource } from "./revision-source.ts";
import { evaluateWindows, selfHealHeldBy } from "./sync-windows.ts";
import { ManagedWatch } from "./watch.ts";

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
  client: KubeClient;
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
  onProgress?: SyncRequest["onProgress"];
}

export function instanceName(app: string, env: string): string {
  return `${app}.${env}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, "-")
    .slice(0, 63);
}

const SHORT = (sha: string) => sha.slice(0, 7);

export class EnvironmentController {
  readonly instance: string;
  private readonly target: SyncTarget;
  private readonly gate: ApprovalGate;
  private chain: Promise<unknown> = Promise.resolve();
  private queued: { trigger: Trigger; actor: string } | undefined;
  private readonly rendered = new Map<string, Promise<RenderedSource>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private watcher: ManagedWatch | undefined;
  private undeclared: ManagedWatch | undefined;
  private stopped = false;
  /**
   * One per sync that writes, aborted by stop(): it makes no further attempt (the lease may be
   * someone else's). Fresh per sync, so a stopped controller still serves later requests.
   */
  private readonly writing = new Set<AbortController>();
  /** Running its own loop (start() was called), as opposed to serving one CLI command. */
  private looping = false;
  private lastDriftSignature = "";
  private lastOrphanSignature = "";
  /** The latest orphan scan (derived, so kept in memory only). */
  orphans: Orphan[] = [];

  constructor(private readonly o: ControllerOptions) {
    this.instance = instanceName(o.app, o.env.name);
    this.target = { instance: this.instance, env: o.env, health: o.health };
    this.gate = new ApprovalGate({
      env: o.env,
      store: o.store,
      instance: this.instance,
      emit: o.emit,
      log: o.log,
    });
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
    this.looping = true;
    const interval = this.o.pollIntervalMs ?? this.o.env.pollInterval;
    if (interval > 0) {
      const schedule = () => {
        // Up to 20% jitter so a fleet of environments does not poll in lockstep.
        this.pollTimer = setTimeout(
          () => {
            this.nudge("poll", "syncward");
            schedule();
          },
          interval + Math.random() * interval * 0.2,
        );
        this.pollTimer.unref();
      };
      schedule();
    }
    if (this.o.watch ?? true) {
      this.watcher = new ManagedWatch(
        this.o.client,
        this.instance,
        this.o.env.policy.namespaces,
        this.o.log,
        () => this.nudge("selfHeal", "syncward"),
      );
      // A risky object nobody declared (a DaemonSet, a privileged Pod) is reported within seconds.
      this.undeclared = new ManagedWatch(
        this.o.client,
        this.instance,
        this.o.env.policy.namespaces,
        this.o.log,
        () => void this.serialize(() => this.rescanOrphans()),
        { undeclared: true, accept: (obj) => mayBeOrphan(obj, this.instance) },
      );
      this.undeclared.ensureKinds(RISKY_KINDS);
    }
    this.nudge("poll", "syncward");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.looping = false;
    clearTimeout(this.pollTimer);
    clearTimeout(this.wakeTimer);
    this.watcher?.stop();
    this.undeclared?.stop();
    for (const sync of this.writing) sync.abort();
    await this.chain.catch(() => undefined);
  }

  /** Asks for a pass soon; passes never overlap and nudges during one coalesce into the next. */
  nudge(trigger: Trigger, actor: string): void {
    if (this.stopped || this.o.standby?.()) return;
    const first = !this.queued;
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
    const q = this.queued;
    this.queued = undefined;
    if (!q || this.stopped) return;
    try {
      await this.pass(q.trigger, q.actor);
    } catch (err) {
      if (this.stopped)
        this.o.log.info(
          { err, instance: this.instance },
          "stopped during a pass; what it was doing is left to whoever runs next",
        );
      else this.o.log.error({ err, instance: this.instance }, "reconcile pass failed");
    }
  }

  private desiredAt(sha: string): Promise<RenderedSource> {
    let r = this.rendered.get(sha);
    if (!r) {
      r = this.o.source.tree(sha).then((dir) => render(dir, this.o.env.source.path, this.renderOptions()));
      r.catch(() => this.rendered.delete(sha));
      this.rendered.set(sha, r);
      // Keep only recent revisions in memory.
      if (this.rendered.size > 4) this.rendered.delete(this.rendered.keys().next().value as string);
    }
    return r;
  }

  /** Chart sources: the release and what the destination serves for `.Capabilities` (read once a while). */
  private renderOptions(): RenderOptions {
    return {
      helmContext: {
        settings: this.o.env.source.helm,
        releaseName: this.o.env.name,
        namespace: this.o.env.destination.namespace,
        capabilities: () => this.capabilities.get(),
        ...remoteChart(this.o.env.source),
      },
    };
  }

  private readonly capabilities = new Cached(10 * 60_000, () => clusterCapabilities(this.o.client));

  /** policy.requireSignedCommits: why `sha` must not be deployed, or undefined. */
  private async signatureRefusal(sha: string): Promise<string | undefined> {
    if (!this.o.env.policy.requireSignedCommits) return undefined;
    const source = this.o.source;
    const problem = source.signatureProblem
      ? await source.signatureProblem(sha)
      : `${source.description} cannot tell whether commit ${SHORT(sha)} is signed`;
    // The reason first: check-run titles are cut at 120 characters.
    return (
      problem &&
      `${problem}; environment ${this.o.env.name} deploys only signed commits (policy.requireSignedCommits)`
    );
  }

  private request(
    revision: string,
    objects: KubeObject[],
    prune: boolean,
    state: EnvironmentState,
    extra: Partial<SyncRequest> = {},
  ): SyncRequest {
    return {
      revision,
      objects,
      prune,
      inventory: state.inventory,
      hooksDigest: state.hooksDigest,
      healthTimeoutMs: this.o.healthTimeoutMs,
      ...extra,
    };
  }

  /**
   * Writes one operation to history. `retried` are its attempts that failed and were retried:
   * written with the final outcome, since during an outage of the API server the state they
   * belong in is unreachable anyway.
   */
  private async record(
    trigger: Trigger,
    actor: string,
    outcome: SyncOutcome,
    mutate: (s: EnvironmentState) => void,
    drifted?: string[],
    { retried, omitted }: RetriedAttempts = { retried: [], omitted: 0 },
    extra: Partial<HistoryEntry> = {},
  ): Promise<{ state: EnvironmentState; entry: HistoryEntry }> {
    let entry!: HistoryEntry;
    const state = await this.o.store.update(this.instance, (s) => {
      entry = appendHistory(
        s,
        {
          ...historyEntryOf(trigger, actor, outcome, drifted),
          ...(retried.length > 0 ? { retried } : {}),
          ...(omitted > 0 ? { retriedOmitted: omitted } : {}),
          ...extra,
        },
        this.o.env.revisionHistoryLimit,
      );
      if (outcome.inventory.length > 0) s.inventory = outcome.inventory;
      s.health = healthAfter(s.health, outcome);
      mutate(s);
    });
    return { state, entry };
  }

  private async renderOrReport(
    head: string,
    state: EnvironmentState,
    trigger: Trigger,
    actor: string,
  ): Promise<RenderedSource | undefined> {
    try {
      return await this.desiredAt(head);
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      const message = err.message;
      if (state.lastError?.revision === head && state.lastError.message === message) return undefined;
      const now = new Date().toISOString();
      const outcome = outcomeWithoutWork(head, "Error", `render failed: ${message}`);
      await this.record(trigger, actor, outcome, (s) => {
        s.lastError = { revision: head, message, at: now };
        s.syncStatus = "Unknown";
      });
      this.o.log.warn(
        { instance: this.instance, revision: head, problems: err.problems },
        "render failed; nothing applied",
      );
      this.o.emit({
        type: "renderError",
        instance: this.instance,
        env: this.o.env.name,
        revision: head,
        message,
        problems: err.problems,
      });
      return undefined;
    }
  }

  /** One level-triggered pass. */
  private async pass(trigger: Trigger, actor: string): Promise<void> {
    const env = this.o.env;
    let state = await this.o.store.load(this.instance);
    if (state.handedOver) {
      await this.runHandedOver(state.handedOver);
      state = await this.o.store.load(this.instance);
    }
    const policy = effectivePolicy(env, state);
    const head = await this.o.source.head(env.source.branch);
    const rendered = await this.renderOrReport(head, state, trigger, actor);
    if (!rendered) return;
    this.watcher?.ensureKinds([
      ...(state.inventory ?? []),
      ...rendered.objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind })),
    ]);
    if (trigger === "poll") await this.scanOrphans(head, rendered);

    if (policy.automated && head !== state.lastSyncedRevision && state.stuck?.revision !== head) {
      const windows = evaluateWindows(env.syncWindows, new Date(), false);
      if (!windows.allowed) {
        this.wakeAt(windows.nextOpen);
        await this.o.store.update(this.instance, (s) => {
          s.syncStatus = "OutOfSync";
        });
        this.o.emit({
          type: "waiting",
          instance: this.instance,
          env: env.name,
          revision: head,
          reason: windows.reason,
          until: windows.nextOpen?.toISOString(),
        });
        return;
      }
      // An unverified commit is refused (in syncRevision) before anyone is asked to approve it.
      const unverified = await this.signatureRefusal(head);
      if (!unverified && !(await this.gate.check(head, trigger, actor, false))) return;
      await this.syncRevision(head, trigger, actor, { prune: policy.prune, loop: true });
      return;
    }

    const { plan, live } = await assess(
      this.o.client,
      this.target,
      this.request(head, rendered.objects, policy.prune, state),
    );
    const drifted = plan.steps.flatMap((s) => s.tasks);
    const extra = [...plan.prunes, ...plan.requiresPruning].map((p) => p.key);
    if (drifted.length === 0 && extra.length === 0) {
      this.lastDriftSignature = "";
      if (state.syncStatus !== "Synced" && head === state.lastSyncedRevision) {
        state = await this.o.store.update(this.instance, (s) => {
          s.syncStatus = "Synced";
        });
      }
      return;
    }

    const healHeld = selfHealHeldBy(env.syncWindows, new Date());
    if (policy.selfHeal && head === state.lastSyncedRevision && drifted.length > 0 && !healHeld) {
      await this.heal(
        head,
        rendered,
        drifted.map((t) => ({ key: t.key, paths: t.drifted, live: live.get(t.key), obj: t.obj })),
        policy.prune,
        state,
      );
      return;
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
    if (signature !== this.lastDriftSignature) {
      this.lastDriftSignature = signature;
      const reason =
        policy.source === "freeze"
          ? `${policy.label}: drift is left alone until unfrozen`
          : !policy.automated
            ? "manual sync policy: waiting for a sync"
            : state.stuck?.revision === head
              ? `stuck: ${state.stuck.reason}`
              : healHeld && policy.selfHeal
                ? `self-heal held: ${healHeld}`
                : "drift detected; self-heal is off";
      this.o.log.info(
        { instance: this.instance, revision: head, drifted: driftedFields, requiresPruning: extra },
        `OutOfSync: ${reason}`,
      );
      this.o.emit({
        type: "outOfSync",
        instance: this.instance,
        env: env.name,
        revision: head,
        drifted: driftedFields,
        requiresPruning: extra,
        reason,
      });
    }
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
      const head = await this.o.source.head(this.o.env.source.branch);
      await this.scanOrphans(head, await this.desiredAt(head));
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

  /** Re-applies only the drifted objects; counts heals per object to spot drift fights. */
  private async heal(
    head: string,
    rendered: RenderedSource,
    drifted: Array<{ key: string; paths: string[]; live?: KubeObject; obj?: KubeObject }>,
    prune: boolean,
    state: EnvironmentState,
  ): Promise<void> {
    const options = compareOptionsFor(this.o.env);
    const trails = new Map(
      drifted.map((d) => [d.key, d.live && d.obj ? revertTrail(d.key, d.obj, d.live, options) : []]),
    );
    // Backing off is for fights with trusted managers: an untrusted change is reverted at once, every time.
    const untrusted = (key: string) => trails.get(key)?.some((r) => !r.trusted) ?? false;
    const fought = (key: string) => trails.get(key)?.some((r) => r.trusted) ?? true;
    // The policy may have changed while this pass looked (a freeze from the CLI or another
    // replica): check again right before writing, so a frozen environment is never healed.
    const fresh = await this.o.store.load(this.instance);
    if (!effectivePolicy(this.o.env, fresh).selfHeal) return;
    const now = Date.now();
    const due = drifted.filter((d) => untrusted(d.key) || nextHealAt(fresh.selfHeals[d.key]) <= now);
    const later = drifted.filter((d) => !due.includes(d));
    if (later.length > 0)
      this.wakeAt(new Date(Math.min(...later.map((d) => nextHealAt(fresh.selfHeals[d.key])))));
    if (due.length === 0) return;
    const fields = due.flatMap((d) =>
      d.paths.length > 0 ? d.paths.map((p) => `${d.key} ${p}`) : [`${d.key} (missing)`],
    );
    const reverted = due.flatMap((d) => trails.get(d.key) ?? []);
    const outcome = await syncEnvironment(
      this.o.client,
      this.target,
      this.request(head, rendered.objects, prune, state, { only: new Set(due.map((d) => d.key)) }),
    );
    const fights: Array<{
      key: string;
      paths: string[];
      live?: KubeObject;
      heals: number;
      backoffMs: number;
    }> = [];
    const { entry } = await this.record(
      "selfHeal",
      "syncward",
      outcome,
      (s) => {
        for (const d of due) {
          if (!fought(d.key)) continue;
          const counter = recordHeal(s.selfHeals[d.key], head, new Date());
          s.selfHeals[d.key] = counter;
          if (isFight(counter))
            fights.push({ ...d, heals: counter.times.length, backoffMs: healBackoffMs(counter) });
        }
        s.syncStatus = outcome.phase === "Succeeded" ? "Synced" : "OutOfSync";
      },
      fields,
      undefined,
      reverted.length > 0 ? { reverted } : {},
    );
    const risky = reverted.filter((r) => r.security);
    if (risky.length > 0)
      this.o.log.warn(
        { instance: this.instance, revision: head, reverted: risky, result: outcome.phase },
        `self-heal reverted security-relevant changes: ${risky.map((r) => `${r.object} ${r.path} (${r.security}) by ${r.manager ?? "an unknown manager"}`).join("; ")}`,
      );
    this.o.log.info(
      { instance: this.instance, revision: head, drifted: fields, result: outcome.phase },
      "self-heal",
    );
    this.o.emit({
      type: "selfHealed",
      instance: this.instance,
      env: this.o.env.name,
      revision: head,
      drifted: fields,
      outcome,
      entry,
      reverted,
    });
    for (const f of fights) {
      const fight = driftFight(f);
      this.o.log.warn(
        { instance: this.instance, ...fight },
        `drift fight: ${fight.object} healed ${f.heals} times at ${SHORT(head)}; changed by ${fight.managers.join(", ") || "an unknown manager"}`,
      );
      this.o.emit({
        type: "driftFight",
        instance: this.instance,
        env: this.o.env.name,
        revision: head,
        fight,
      });
    }
  }

  /** retry.refresh: whether a retry may move to `revision` (not frozen, a window open, approved). */
  private async mayMoveTo(revision: string, actor: string): Promise<boolean> {
    const state = await this.o.store.load(this.instance);
    if (state.freeze) return false;
    if (!evaluateWindows(this.o.env.syncWindows, new Date(), false).allowed) return false;
    return this.gate.check(revision, "retry", actor, false);
  }

  private async syncRevision(
    head: string,
    trigger: Trigger,
    actor: string,
    opts: {
      prune: boolean;
      force?: boolean;
      dryRun?: boolean;
      overridePruneLimit?: boolean;
      allowEmpty?: boolean;
      confirmPrune?: boolean;
      pinned?: boolean;
      onProgress?: SyncRequest["onProgress"];
      /** Started by the loop's own pass, which a stop() before this point has already ended. */
      loop?: boolean;
    },
  ): Promise<SyncOutcome> {
    const env = this.o.env;
    let state = await this.o.store.load(this.instance);
    let lastTrigger = trigger;
    let retried: RetriedAttempts = { retried: [], omitted: 0 };
    /** The last attempt could not fetch the source: not the revision's fault. */
    let unfetched = false;
    // A dry run writes nothing, so losing the lease does not concern it.
    const abort = opts.dryRun ? undefined : new AbortController();
    if (abort) this.writing.add(abort);
    if (opts.loop && this.stopped) abort?.abort();
    const signal = abort?.signal;
    const outcome = await syncWithRetry(
      env.syncPolicy.retry,
      async (n) => {
        unfetched = false;
        // A retry moves to the newest revision of the branch: a fix that landed meanwhile wins.
        // A retry stays on its operation's revision (Argo CD); with retry.refresh it moves to the
        // newest one, only if that passes every gate a new revision must pass.
        const newest =
          n === 1 || opts.pinned || !env.syncPolicy.retry.refresh
            ? head
            : await this.o.source.head(env.source.branch);
        const revision = newest === head || (await this.mayMoveTo(newest, actor)) ? newest : head;
        if (n > 1) lastTrigger = "retry";
        const refusal = opts.dryRun ? undefined : await this.signatureRefusal(revision);
        if (refusal) return outcomeWithoutWork(revision, "Refused", refusal);
        let rendered: RenderedSource;
        try {
          rendered = await this.desiredAt(revision);
        } catch (err) {
          // Only a SourceError is the revision's fault; anything else (GitHub down or limiting us)
          // means the source could not be fetched: worth a retry, and no reason to mark it stuck.
          if (!(err instanceof SourceError)) {
            unfetched = true;
            return {
              ...outcomeWithoutWork(
                revision,
                "Failed",
                `fetching ${SHORT(revision)} failed: ${errorMessage(err)}`,
                opts.dryRun,
              ),
              retryable: true,
            };
          }
          return outcomeWithoutWork(revision, "Error", `render failed: ${err.message}`, opts.dryRun);
        }
        try {
          state = await this.o.store.load(this.instance);
        } catch (err) {
          // The state lives in syncward's own namespace, which deploy/ grants: a 403 there comes
          // from an API server that has just started and not yet loaded its RBAC (it answers
          // before its informers sync, kubernetes#101422), so it is retried like an outage.
          const startingUp = err instanceof KubeApiError && err.forbidden;
          return {
            ...outcomeWithoutWork(
              revision,
              "Failed",
              `reading the environment's state failed: ${errorMessage(err)}`,
              opts.dryRun,
            ),
            retryable: isTransient(err) || startingUp,
          };
        }
        return syncEnvironment(
          this.o.client,
          this.target,
          this.request(revision, rendered.objects, opts.prune, state, {
            force: opts.force,
            dryRun: opts.dryRun,
            overridePruneLimit: opts.overridePruneLimit,
            allowEmpty: opts.allowEmpty,
            confirmPrune: opts.confirmPrune,
            // Hooks run on every sync someone asked for; a new revision runs them when it changes something.
            hooks: AUTOMATIC.has(trigger) ? "ifChanged" : "always",
            origins: originsOf(rendered),
            onProgress: (event) => {
              opts.onProgress?.(event);
              // Each wave that starts shows on the sync's live check run (the reporter throttles).
              if (event.type === "wave" && !opts.dryRun)
                this.o.emit({
                  type: "syncProgress",
                  instance: this.instance,
                  env: env.name,
                  revision,
                  wave: event.wave,
                  objects: event.objects,
                });
            },
            signal,
            onPlan: (plan) => {
              if (opts.dryRun) return;
              const changes = plan.steps.reduce((n, st) => n + st.tasks.length, 0) + plan.prunes.length;
              this.o.emit({
                type: "syncStarted",
                instance: this.instance,
                env: env.name,
                revision,
                trigger: lastTrigger,
                actor,
                changes,
                planned: plannedLines(plan),
              });
            },
          }),
        );
      },
      {
        signal,
        revision: head,
        dryRun: opts.dryRun,
        onRetry: (n, failed, delay) => {
          retried = addRetried(retried, {
            attempt: n,
            startedAt: failed.startedAt,
            finishedAt: failed.finishedAt,
            revision: failed.revision,
            message: `${failed.message} (retrying in ${formatDuration(delay)})`,
          });
          this.o.log.warn(
            {
              instance: this.instance,
              attempt: n,
              revision: failed.revision,
              delayMs: delay,
              error: failed.message,
            },
            "sync failed; retrying",
          );
        },
      },
    ).finally(() => abort && this.writing.delete(abort));
    if (outcome.dryRun) return outcome;
    const ok = outcome.phase === "Succeeded";
    const { entry } = await this.record(
      lastTrigger,
      actor,
      outcome,
      (s) => {
        if (ok) {
          s.lastSyncedRevision = outcome.revision;
          if (outcome.hooksDigest !== undefined) s.hooksDigest = outcome.hooksDigest;
          s.syncStatus = outcome.resources.some((r) => r.status === "OutOfSync") ? "OutOfSync" : "Synced";
          s.stuck = undefined;
          s.lastError = undefined;
          s.selfHeals = {};
          if (s.pendingSync?.revision === outcome.revision) s.pendingSync = undefined;
          s.pendingApprovals = s.pendingApprovals.filter((a) => a.sha !== outcome.revision);
        } else {
          s.syncStatus = "OutOfSync";
          // A source that could not be fetched is tried again by the next pass, not held as stuck.
          if (!unfetched)
            s.stuck = {
              revision: outcome.revision,
              reason: outcome.message,
              since: new Date().toISOString(),
            };
        }
      },
      undefined,
      retried,
    );
    this.o.log.info(
      {
        instance: this.instance,
        revision: outcome.revision,
        trigger: lastTrigger,
        result: outcome.phase,
        writes: outcome.writes,
      },
      outcome.message,
    );
    this.o.emit({
      type: "synced",
      instance: this.instance,
      env: env.name,
      revision: outcome.revision,
      trigger: lastTrigger,
      actor,
      outcome,
      entry,
    });
    if (!ok && !unfetched)
      this.o.emit({
        type: "stuck",
        instance: this.instance,
        env: env.name,
        revision: outcome.revision,
        reason: outcome.message,
      });
    return outcome;
  }

  /**
   * A sync a person asked for (CLI, PR comment, button). Serialized with the loop's passes. On a
   * replica without the app's lease it is handed over (see HandedOverSync) and `handedOver` is set.
   */
  sync(request: ManualSync): Promise<SyncOutcome & { handedOver?: boolean }> {
    // A dry run writes nothing, so it need not wait for the passes, nor make them wait for it
    // (a preview must never hold up a sync or a self-heal).
    if (request.dryRun) return this.syncNow(request);
    return this.serialize(() => this.syncNow(request));
  }

  private async syncNow(request: ManualSync): Promise<SyncOutcome & { handedOver?: boolean }> {
    const env = this.o.env;
    const state = await this.o.store.load(this.instance);
    const policy = effectivePolicy(env, state);
    const refuse = (message: string): SyncOutcome => {
      return outcomeWithoutWork(state.lastSyncedRevision ?? "", "Refused", message, request.dryRun);
    };
    if (state.freeze && !request.ignoreFreeze && !request.dryRun) {
      return refuse(
        `environment ${env.name} is frozen by ${state.freeze.by} since ${state.freeze.at}${state.freeze.reason ? ` (${state.freeze.reason})` : ""}; unfreeze it first or force the sync`,
      );
    }
    const windows = evaluateWindows(env.syncWindows, new Date(), true);
    if (!windows.allowed && !request.dryRun) return refuse(`sync window: ${windows.reason}`);
    const standby = request.dryRun ? undefined : this.o.standby?.();
    const revision = request.revision
      ? await this.o.source.resolve(request.revision)
      : await this.o.source.head(env.source.branch);
    if (standby) return this.handOver(request, revision);
    return this.syncRevision(revision, request.trigger, request.actor, {
      prune: request.prune ?? policy.prune,
      force: request.force,
      dryRun: request.dryRun,
      overridePruneLimit: request.overridePruneLimit,
      allowEmpty: request.allowEmpty,
      confirmPrune: request.confirmPrune,
      pinned: Boolean(request.revision),
      onProgress: request.onProgress,
    });
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
        ...(request.allowEmpty ? { allowEmpty: true } : {}),
        ...(request.confirmPrune ? { confirmPrune: true } : {}),
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

  /** A person asks for a sync that needs approval (`/sync prod`): held until approved. */
  async requestApprovedSync(request: {
    trigger: Trigger;
    actor: string;
    prune?: boolean;
    force?: boolean;
    allowEmpty?: boolean;
    confirmPrune?: boolean;
  }): Promise<{ revision: string; held: boolean }> {
    const revision = await this.o.source.head(this.o.env.source.branch);
    const flags = {
      prune: request.prune,
      force: request.force,
      ...(request.allowEmpty ? { allowEmpty: true } : {}),
      ...(request.confirmPrune ? { confirmPrune: true } : {}),
    };
    const ok = await this.gate.check(revision, request.trigger, request.actor, true, flags);
    if (ok)
      this.syncInBackground({
        trigger: request.trigger,
        actor: request.actor,
        revision,
        ...flags,
        ignoreFreeze: false,
      });
    return { revision, held: !ok };
  }

  /**
   * Records an approval of `revision` by `by` (the caller checked who may approve). When it
   * completes the approvals, the held sync runs: an automated one through the loop, a requested
   * one as the manual sync it was.
   */
  async approve(
    revision: string,
    by: string,
  ): Promise<{ approvers: string[]; needed: number; released: boolean }> {
    const { approvers, needed, released, state } = await this.gate.record(revision, by);
    if (released) {
      const pending = state.pendingSync;
      if (pending?.manual && pending.revision === revision) {
        this.syncInBackground({
          trigger: pending.trigger,
          actor: pending.actor,
          revision,
          prune: pending.prune,
          force: pending.force,
          allowEmpty: pending.allowEmpty,
          confirmPrune: pending.confirmPrune,
        });
      } else {
        this.nudge("comment", by);
      }
    }
    return { approvers, needed, released };
  }

  /** A sync nobody awaits: its failure to finish (a stop, the state unreachable) is logged, not thrown. */
  private syncInBackground(request: ManualSync): void {
    this.sync(request).then(
      (outcome) => {
        // Nobody reads this outcome: a refusal (a freeze, no lease here) must at least be logged.
        if (outcome.phase === "Refused")
          this.o.log.warn(
            { instance: this.instance, revision: request.revision, reason: outcome.message },
            "a requested sync was refused",
          );
      },
      (err: unknown) =>
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
      : await this.o.source.head(this.o.env.source.branch);
    const rendered = await this.desiredAt(sha);
    const policy = effectivePolicy(this.o.env, state);
    const assessment = await assess(
      this.o.client,
      this.target,
      this.request(sha, rendered.objects, policy.prune, state),
    );
    return { revision: sha, assessment, rendered, state };
  }
}

/** What a plan will do, one kubectl-style line per object (the first 50), for live check runs. */
function plannedLines(plan: Plan): string[] {
  const lines = [
    ...plan.steps
      .flatMap((st) => st.tasks)
      .map((t) => `${kubectlName(keyOf(t.obj))} ${t.action === "create" ? "create" : "configure"}`),
    ...plan.prunes.map((p) => `${kubectlName(keyOf(p.live))} prune`),
  ];
  return lines.slice(0, 50);
}

/** source.chart, repoURL and targetRevision, when the chart comes from a chart repository. */
function remoteChart(source: EnvironmentConfig["source"]): { remote?: RemoteChart } {
  const { chart, repoURL, targetRevision } = source;
  return chart && repoURL && targetRevision ? { remote: { chart, repoURL, version: targetRevision } } : {};
}

/** Where each object is declared, so a failure can name the file and line. */
function originsOf(rendered: RenderedSource): Map<string, string> {
  return new Map([...rendered.files].map(([key, file]) => [key, `${file}:${rendered.lines.get(key) ?? 1}`]));
}

/** Triggers of a sync nobody asked for: a new revision found by a push, a merge or a poll. */
const AUTOMATIC = new Set<Trigger>(["push", "merge", "poll"]);

function historyEntryOf(
  trigger: Trigger,
  actor: string,
  outcome: SyncOutcome,
  drifted?: string[],
): Omit<HistoryEntry, "id"> {
  return {
    startedAt: outcome.startedAt,
    finishedAt: outcome.finishedAt,
    revision: outcome.revision,
    trigger,
    actor,
    result: outcome.phase,
    message: outcome.message,
    counts: {
      created: outcome.totals.created,
      configured: outcome.totals.configured,
      pruned: outcome.totals.pruned,
      failed: outcome.totals.failed,
    },
    drifted,
    ...hooksOf(outcome),
  };
}

/** Each hook the operation ran (or skipped), with its phase, wave and outcome. */
function hooksOf(outcome: SyncOutcome): Pick<HistoryEntry, "hooks"> {
  const hooks = outcome.resources.flatMap((r) =>
    r.hook
      ? [{ kind: r.kind, name: r.name, phase: r.hook.phase, wave: r.wave ?? 0, outcome: r.hook.outcome }]
      : [],
  );
  return hooks.length > 0 ? { hooks } : {};
}
