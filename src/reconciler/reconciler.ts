// All environments of one app, each guarded by its own controller. With leases on (the default
// for the controller process and the GitHub App), a replica runs an app's controllers only while
// it holds the app's Lease, so two replicas never operate on one environment at once; when a
// replica dies, another takes the app over within the lease duration.
import { applyFloors, type Floor, floorsFromEnv } from "../config/floors.ts";
import { findEnvironment } from "../config/load.ts";
import type { SyncwardConfig } from "../config/types.ts";
import { compileHealthChecks } from "../engine/health/index.ts";
import type { KubeClient } from "../kube/client.ts";
import { LeaseLock, leaseNameFor } from "../state/lease.ts";
import { INSTANCE_ANNOTATION, STATE_LABEL, StateStore } from "../state/store.ts";
import type { Trigger } from "../state/types.ts";
import { sleep } from "../util/sleep.ts";
import { EnvironmentController, instanceName, type Logger } from "./environment-controller.ts";
import type { Emit } from "./events.ts";
import type { RequiredChecks } from "./required-checks.ts";
import type { RevisionSource } from "./revision-source.ts";

export interface ReconcilerOptions {
  app: string;
  config: SyncwardConfig;
  client: KubeClient;
  source: RevisionSource;
  emit: Emit;
  log: Logger;
  /** Namespace of syncward's own state and leases. */
  stateNamespace: string;
  /** Who this replica is, in Lease holder identities. */
  identity: string;
  leases?: boolean;
  leaseDurationSeconds?: number;
  pollIntervalMs?: number;
  watch?: boolean;
  /** Operator floors no repository can lower (default: from the environment, see floors.ts). */
  floors?: Floor[];
  /** requireChecks: which checks passed on a revision (GitHub's adapter). */
  checks?: RequiredChecks;
}

export class Reconciler {
  readonly store: StateStore;
  private readonly controllers = new Map<string, EnvironmentController>();
  private lock: LeaseLock | undefined;
  private readonly abort = new AbortController();
  private readonly running = new Set<string>();
  private deferring = false;

  constructor(private readonly o: ReconcilerOptions) {
    this.store = new StateStore(o.client, o.stateNamespace);
    const health = compileHealthChecks(o.config.resourceCustomizations);
    const floors = o.floors ?? floorsFromEnv();
    for (const configured of o.config.environments) {
      const env = applyFloors(configured, floors);
      this.controllers.set(
        env.name,
        new EnvironmentController({
          app: o.app,
          env,
          client: o.client,
          store: this.store,
          source: o.source,
          emit: o.emit,
          log: o.log.child?.({ app: o.app, environment: env.name }) ?? o.log,
          pollIntervalMs: o.pollIntervalMs,
          watch: o.watch,
          health,
          checks: o.checks,
          standby: () => this.standby(env.name),
        }),
      );
    }
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
   * Another replica held the app's lease when this one last tried to take it, or this one lost
   * it: until it takes the lease, this replica writes nothing. Before its first try it knows of
   * no holder and serves requests as a replica without leases would.
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

  start(): void {
    if (this.o.leases === false) this.startAll();
    else void this.contend();
    if (this.o.watch !== false) void this.watchState();
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
  private async watchState(): Promise<void> {
    const signal = this.abort.signal;
    const byInstance = new Map(this.environments.map((c) => [c.instance, c]));
    const selector = `${STATE_LABEL}=true`;
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        rv ??= (
          await this.o.client.list("v1", "ConfigMap", {
            namespace: this.o.stateNamespace,
            labelSelector: selector,
          })
        ).resourceVersion;
        rv = await this.o.client.watch(
          "v1",
          "ConfigMap",
          { namespace: this.o.stateNamespace, labelSelector: selector, resourceVersion: rv, signal },
          (type, obj) => {
            const controller = byInstance.get(obj.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "");
            if (type === "MODIFIED" && controller && this.running.has(controller.env.name))
              controller.nudge("poll", "syncward");
          },
        );
      } catch {
        rv = undefined;
        await sleep(2000, signal);
      }
    }
  }

  /**
   * One Lease per app: the replica holding it runs every environment of the app (a renewal every
   * few seconds per app, not per environment); another replica takes over within the lease
   * duration when the holder dies.
   */
  private async contend(): Promise<void> {
    const duration = this.o.leaseDurationSeconds ?? 15;
    const lock = new LeaseLock(
      this.o.client,
      this.o.stateNamespace,
      leaseNameFor(instanceName(this.o.app, "app")),
      this.o.identity,
      {
        leaseDurationSeconds: duration,
      },
    );
    this.lock = lock;
    const signal = this.abort.signal;
    const aborted = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    while (!signal.aborted) {
      let acquired = false;
      try {
        acquired = await lock.tryAcquire();
        this.deferring = !acquired;
      } catch (err) {
        this.o.log.warn({ err, app: this.o.app }, "lease: could not contend");
      }
      if (acquired && !signal.aborted) {
        this.o.log.info({ app: this.o.app, identity: this.o.identity }, "lease acquired; reconciling");
        this.startAll();
        const lost = new Promise<void>((resolve) => lock.start(resolve));
        await Promise.race([lost, aborted]);
        this.deferring = true;
        await this.stopAll();
        if (signal.aborted) break;
        this.o.log.warn({ app: this.o.app, identity: this.o.identity }, "lease lost; stopped reconciling");
      }
      // Retry at a fraction of the lease duration so a dead holder is replaced quickly.
      await sleep((duration * 1000) / 3, signal);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.environments.map((c) => c.stop()));
    await this.lock?.stop().catch(() => undefined);
    this.running.clear();
  }

  /**
   * A push to `branch`: nudges the environments tracking it. When the changed files are known,
   * only environments whose source path they touch are nudged (a monorepo push does not refresh
   * every app); `includes` names the directories an environment's source reads. Returns the
   * environments nudged.
   */
  nudgeBranch(
    branch: string,
    trigger: Trigger,
    actor: string,
    changed?: { files: string[]; includes: (env: string) => string[] },
  ): string[] {
    const nudged: string[] = [];
    for (const c of this.controllers.values()) {
      if (c.env.source.branch !== branch) continue;
      if (changed && !touches(changed.includes(c.env.name), changed.files)) continue;
      c.nudge(trigger, actor);
      nudged.push(c.env.name);
    }
    return nudged;
  }
}

/**
 * Does a change to `files` affect a source whose content comes from `dirs` (the source path and
 * every local directory its kustomizations include)?
 */
export function touches(dirs: string[], files: string[]): boolean {
  const norm = dirs.map((d) => d.replace(/^\.\/?/, "").replace(/\/$/, ""));
  return files.some((f) => norm.some((dir) => dir === "" || f === dir || f.startsWith(`${dir}/`)));
}
