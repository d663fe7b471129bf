// One watch of the state ConfigMaps per (client, namespace), shared by every app of the process.
// Each app used to watch all state ConfigMaps itself: with A apps every state write reached A
// watches, so a replica's idle cost grew with the square of its apps. Now each write reaches one
// watch, which hands it to the app whose environment it belongs to (by the instance annotation).
import type { KubeClient } from "../kube/client.ts";
import type { KubeObject } from "../kube/object.ts";
import { INSTANCE_ANNOTATION, STATE_LABEL } from "../state/store.ts";
import { sleep } from "../util/sleep.ts";

/** Called with each modified (or, for those who ask, created) state ConfigMap of one environment instance. */
export type StateListener = (obj: KubeObject, type?: "ADDED" | "MODIFIED") => void;

/** How long to wait before watching again after the watch failed. */
const RETRY_MS = 2000;

/** Numbers each watch, so a watch stopped and started again never repeats an earlier mark. */
let started = 0;

class SharedStateWatch {
  readonly id = ++started;
  private readonly listeners = new Map<string, Set<StateListener>>();
  private abort: AbortController | undefined;
  /** Watching now (listed, and the stream open or being re-opened from its resourceVersion). */
  connected = false;
  /** How many times the watch failed: a changed count means a state write may have gone unheard. */
  gaps = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly onIdle: () => void,
  ) {}

  /** Listens to `instances`' state ConfigMaps; the returned function stops listening. */
  add(instances: readonly string[], listener: StateListener): () => void {
    for (const instance of instances) {
      const set = this.listeners.get(instance) ?? new Set<StateListener>();
      set.add(listener);
      this.listeners.set(instance, set);
    }
    if (!this.abort) {
      this.abort = new AbortController();
      void this.run(this.abort.signal);
    }
    return () => {
      for (const instance of instances) {
        const set = this.listeners.get(instance);
        set?.delete(listener);
        if (set?.size === 0) this.listeners.delete(instance);
      }
      if (this.listeners.size === 0) {
        this.abort?.abort();
        this.abort = undefined;
        this.connected = false;
        this.onIdle();
      }
    };
  }

  private async run(signal: AbortSignal): Promise<void> {
    const selector = `${STATE_LABEL}=true`;
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        rv ??= (
          await this.client.list("v1", "ConfigMap", { namespace: this.namespace, labelSelector: selector })
        ).resourceVersion;
        this.connected = true;
        rv = await this.client.watch(
          "v1",
          "ConfigMap",
          { namespace: this.namespace, labelSelector: selector, resourceVersion: rv, signal },
          (type, obj) => {
            if (type !== "MODIFIED" && type !== "ADDED") return;
            const instance = obj.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "";
            for (const listener of this.listeners.get(instance) ?? []) listener(obj, type);
          },
        );
      } catch {
        this.connected = false;
        this.gaps++;
        rv = undefined;
        await sleep(RETRY_MS, signal);
      }
    }
  }
}

const shared = new WeakMap<KubeClient, Map<string, SharedStateWatch>>();

/**
 * Calls `listener` with every modification of the state ConfigMaps of `instances` in `namespace`,
 * through the one watch of that namespace the process keeps. Returns the function that stops it.
 */
export function watchStates(
  client: KubeClient,
  namespace: string,
  instances: readonly string[],
  listener: StateListener,
  /** Hear a state's creation too (its first write: a promotion's upstream may record health in it). */
  options: { added?: boolean } = {},
): () => void {
  const root = client.root;
  const byNamespace = shared.get(root) ?? new Map<string, SharedStateWatch>();
  shared.set(root, byNamespace);
  const watch =
    byNamespace.get(namespace) ?? new SharedStateWatch(root, namespace, () => byNamespace.delete(namespace));
  byNamespace.set(namespace, watch);
  const heard: StateListener = options.added
    ? listener
    : (obj, type) => {
        if (type === "MODIFIED") listener(obj);
      };
  return watch.add(instances, heard);
}

/**
 * A token that stays the same for as long as the process's state watch of `namespace` stays
 * connected without a gap (undefined while it is not connected): equal tokens at two moments mean
 * every state write in between was heard.
 */
export function stateWatchMark(client: KubeClient, namespace: string): string | undefined {
  const watch = shared.get(client.root)?.get(namespace);
  return watch?.connected ? `${watch.id}.${watch.gaps}` : undefined;
}
