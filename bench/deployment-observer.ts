// Watches one Deployment with a client of its own and timestamps every event on arrival, so the
// self-heal benchmark measures what any other watcher of the API server would see.
import { performance } from "node:perf_hooks";
import type { KubeClient } from "../src/kube/client.ts";
import { KubeApiError } from "../src/kube/errors.ts";
import { sleep } from "../src/util/sleep.ts";

export interface ObservedEvent {
  /** performance.now() when the event arrived. */
  at: number;
  resourceVersion: string;
  replicas: number;
  readyReplicas: number;
  statusReplicas: number;
  /** Containers in the pod template (an added sidecar makes it 2). */
  containers: number;
  /** Some container of the pod template is privileged. */
  privileged: boolean;
}

export class DeploymentObserver {
  readonly events: ObservedEvent[] = [];
  /** Watch requests made (the first, and every reconnect after the server ended a stream). */
  watches = 0;
  private readonly abort = new AbortController();
  private readonly waiters = new Set<() => void>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  /** Lists once (for a resourceVersion), then keeps a watch open until `stop`. */
  async start(): Promise<void> {
    const { running } = await keepWatching(
      this.kube,
      "apps/v1",
      "Deployment",
      this.namespace,
      this.abort.signal,
      (_type, obj) => {
        if (obj.metadata.name !== this.name) return;
        const spec = obj.spec as {
          replicas?: number;
          template?: { spec?: { containers?: Array<{ securityContext?: { privileged?: boolean } }> } };
        };
        const containers = spec.template?.spec?.containers ?? [];
        const status = (obj.status ?? {}) as { replicas?: number; readyReplicas?: number };
        this.events.push({
          at: performance.now(),
          resourceVersion: obj.metadata.resourceVersion ?? "",
          replicas: spec.replicas ?? 1,
          readyReplicas: status.readyReplicas ?? 0,
          statusReplicas: status.replicas ?? 0,
          containers: containers.length,
          privileged: containers.some((c) => c.securityContext?.privileged === true),
        });
        for (const wake of this.waiters) wake();
      },
      () => this.watches++,
    );
    this.running = running;
  }

  /** The first event at index >= `from` that satisfies `match`, waiting for it up to `timeoutMs`. */
  async next(
    match: (e: ObservedEvent) => boolean,
    from: number,
    timeoutMs: number,
  ): Promise<{ event: ObservedEvent; index: number } | undefined> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      for (let i = from; i < this.events.length; i++) {
        const event = this.events[i] as ObservedEvent;
        if (match(event)) return { event, index: i };
      }
      from = this.events.length;
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await nextWake(this.waiters, left);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }
}

/**
 * Lists `kind` in `namespace` once (for a resourceVersion), then keeps a watch open until `signal`
 * aborts, re-listing when the version is too old; resolves once the list is done, with the loop
 * (`running`, which ends with the signal).
 * `onWatch` counts each watch request (the first and every reconnect).
 */
export async function keepWatching(
  kube: KubeClient,
  apiVersion: string,
  kind: string,
  namespace: string,
  signal: AbortSignal,
  onEvent: Parameters<KubeClient["watch"]>[3],
  onWatch: () => void = () => undefined,
): Promise<{ running: Promise<void> }> {
  let { resourceVersion } = await kube.list(apiVersion, kind, { namespace });
  const running = (async () => {
    while (!signal.aborted) {
      try {
        onWatch();
        resourceVersion = await kube.watch(apiVersion, kind, { namespace, resourceVersion, signal }, onEvent);
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.status === 410)
          resourceVersion = (await kube.list(apiVersion, kind, { namespace })).resourceVersion;
        else await sleep(200, signal);
      }
    }
  })();
  return { running };
}

/** Resolves at the next call of a function `waiters` holds, or after `ms`. */
export function nextWake(waiters: Set<() => void>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      waiters.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    waiters.add(wake);
  });
}
