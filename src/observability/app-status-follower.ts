// Keeps `syncward_app_info` equal to what the state store holds: it lists and then watches the
// state ConfigMaps, so a status written by another replica or by the CLI shows on this replica's
// gauge too, and the gauge is right from start (before any event). Which environments are
// configured, and where they deploy, comes from the runtimes (`track`): only they have series,
// and one that leaves the config loses its series.
import type { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/object.ts";
import { instanceName } from "../reconciler/environment-controller.ts";
import { INSTANCE_ANNOTATION, STATE_KEY, STATE_LABEL } from "../state/store.ts";
import type { EnvironmentState } from "../state/types.ts";
import { sleep } from "../util/sleep.ts";
import { type AppStatus, statusOfState } from "./app-status.ts";
import { appOf, type Metrics } from "./metrics.ts";
import type { Placement } from "./placement.ts";

const UNKNOWN: AppStatus = { sync: "Unknown", health: "Unknown" };

/** The status a state ConfigMap holds; undefined when it is not readable state (left to the store to report). */
export function storedStatus(cm: KubeObject & { data?: Record<string, string> }): AppStatus | undefined {
  const text = cm.data?.[STATE_KEY];
  if (text === undefined) return UNKNOWN;
  try {
    const state = JSON.parse(text) as Partial<EnvironmentState> | null;
    if (typeof state !== "object" || state === null || Array.isArray(state)) return undefined;
    return statusOfState({
      syncStatus: state.syncStatus ?? "Unknown",
      health: state.health,
      stuck: state.stuck,
      pin: state.pin,
    });
  } catch {
    return undefined;
  }
}

interface Tracked {
  app: string;
  environment: string;
  placement?: Placement;
}

/** A configured environment: its name, and where it deploys (the series' placement labels). */
export type TrackedEnvironment = string | { name: string; placement?: Placement };

export class AppStatusFollower {
  /** Configured environments by state instance name. */
  private readonly tracked = new Map<string, Tracked>();
  /** The last status read from each state ConfigMap, by instance, tracked or not (an app may be tracked later). */
  private readonly stored = new Map<string, AppStatus>();
  private readonly abort = new AbortController();
  private running?: Promise<void>;

  constructor(
    private readonly o: {
      client: KubeClient;
      namespace: string;
      metrics: Pick<Metrics, "setAppStatus">;
      log?: { warn(obj: object, msg: string): void };
      /** Wait after a failed list or watch before trying again (ms; default 2 s). */
      retryMs?: number;
    },
  ) {}

  /** The app's configured environments (its config loaded or reloaded); others of the app lose their series. */
  track(app: string, environments: TrackedEnvironment[]): void {
    const named = environments.map((e) => (typeof e === "string" ? { name: e } : e));
    const instances = new Set(named.map((env) => instanceName(app, env.name)));
    for (const [instance, t] of this.tracked) {
      if (t.app === app && !instances.has(instance)) this.forget(instance);
    }
    for (const { name: environment, placement } of named) {
      const instance = instanceName(app, environment);
      this.tracked.set(instance, { app, environment, ...(placement ? { placement } : {}) });
      this.show(instance);
    }
  }

  /** The app stopped here (uninstalled, its config removed): its series go. */
  untrack(app: string): void {
    for (const [instance, t] of this.tracked) if (t.app === app) this.forget(instance);
  }

  start(): void {
    this.running ??= this.follow();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private labels(instance: string, t: Tracked) {
    return {
      app: appOf({ instance, env: t.environment }),
      environment: t.environment,
      placement: t.placement,
    };
  }

  private forget(instance: string): void {
    const t = this.tracked.get(instance);
    if (!t) return;
    this.tracked.delete(instance);
    this.o.metrics.setAppStatus(this.labels(instance, t), undefined);
  }

  /** A tracked environment's series from its stored state; one with no state yet is Unknown. */
  private show(instance: string): void {
    const t = this.tracked.get(instance);
    if (t) this.o.metrics.setAppStatus(this.labels(instance, t), this.stored.get(instance) ?? UNKNOWN);
  }

  private read(type: "ADDED" | "MODIFIED" | "DELETED", cm: KubeObject): void {
    const instance = cm.metadata.annotations?.[INSTANCE_ANNOTATION];
    if (!instance) return;
    const status = type === "DELETED" ? undefined : storedStatus(cm);
    if (type !== "DELETED" && !status) return; // unreadable: keep the last good status
    if (status) this.stored.set(instance, status);
    else this.stored.delete(instance);
    this.show(instance);
  }

  private async follow(): Promise<void> {
    const signal = this.abort.signal;
    const selector = `${STATE_LABEL}=true`;
    const namespace = this.o.namespace;
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await this.o.client.list("v1", "ConfigMap", { namespace, labelSelector: selector });
          const present = new Set<string>();
          for (const cm of list.items) {
            this.read("ADDED", cm);
            present.add(cm.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "");
          }
          // Deleted while no watch ran: back to the default state.
          for (const instance of [...this.stored.keys()]) {
            if (!present.has(instance)) {
              this.stored.delete(instance);
              this.show(instance);
            }
          }
          rv = list.resourceVersion;
        }
        rv = await this.o.client.watch(
          "v1",
          "ConfigMap",
          { namespace, labelSelector: selector, resourceVersion: rv, signal },
          (type, cm) => this.read(type, cm),
        );
      } catch (err) {
        if (signal.aborted) break;
        rv = undefined;
        // 410: the watch's resourceVersion is too old; list again at once.
        if (err instanceof KubeApiError && err.status === 410) continue;
        this.o.log?.warn({ err, namespace }, "app status: cannot follow the state ConfigMaps; retrying");
        await sleep(this.o.retryMs ?? 2000, signal);
      }
    }
  }
}
