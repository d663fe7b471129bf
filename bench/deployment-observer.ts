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
    let { resourceVersion } = await this.kube.list("apps/v1", "Deployment", { namespace: this.namespace });
    const signal = this.abort.signal;
    this.running = (async () => {
      while (!signal.aborted) {
        try {
          this.watches++;
          resourceVersion = await this.kube.watch(
            "apps/v1",
            "Deployment",
            { namespace: this.namespace, resourceVersion, signal },
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
          );
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof KubeApiError && err.status === 410) {
            resourceVersion = (await this.kube.list("apps/v1", "Deployment", { namespace: this.namespace }))
              .resourceVersion;
          } else await sleep(200, signal);
        }
      }
    })();
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
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }
}
