// syncward's cluster registry: the cluster Secrets in its own namespace, listed at start and then
// watched, so a cluster added, rotated or removed takes effect without a restart. A Secret that
// cannot be read is kept as its error (the environments naming it fail with it); its values are
// never logged.
import type { KubeClient } from "./client.ts";
import {
  CLUSTER_SECRET_LABEL,
  CLUSTER_SECRET_TYPE,
  type ClusterEntry,
  clusterFromSecret,
  clusterNameOf,
} from "./cluster-secret.ts";
import { KubeApiError } from "./errors.ts";
import type { KubeObject } from "./object.ts";

export const CLUSTER_SELECTOR = `${CLUSTER_SECRET_LABEL}=${CLUSTER_SECRET_TYPE}`;

export type RegistryEntry = ClusterEntry | { name: string; secret: string; error: string };

interface RegistryLogger {
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

/** The registry's entries by cluster name, from a list of Secrets (pure; the first Secret of a name wins). */
export function entriesOf(secrets: KubeObject[]): Map<string, RegistryEntry> {
  const out = new Map<string, RegistryEntry>();
  for (const s of [...secrets].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    let entry: RegistryEntry;
    try {
      entry = clusterFromSecret(s);
    } catch (err) {
      entry = { name: clusterNameOf(s), secret: s.metadata.name, error: (err as Error).message };
    }
    if (!out.has(entry.name)) out.set(entry.name, entry);
  }
  return out;
}

export class ClusterRegistry {
  private secrets = new Map<string, KubeObject>();
  private current = new Map<string, RegistryEntry>();
  private readonly listeners = new Set<(names: string[]) => void>();
  private readonly abort = new AbortController();
  private loaded?: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    private readonly log?: RegistryLogger,
  ) {}

  get entries(): ReadonlyMap<string, RegistryEntry> {
    return this.current;
  }

  /** Reads the Secrets once (the CLI); a registry nobody may read is empty, with a warning. */
  load(): Promise<void> {
    this.loaded ??= this.list().then(
      () => undefined,
      (err) => {
        this.loaded = undefined;
        throw err;
      },
    );
    return this.loaded;
  }

  /** Lists, then watches until stop(); resolves after the first list (or its failure, retried). */
  start(): Promise<void> {
    const first = new Promise<void>((resolve) => void this.run(resolve));
    return first;
  }

  stop(): void {
    this.abort.abort();
  }

  /** Called with the names of clusters whose entries changed (added, rotated, removed). */
  onChange(listener: (names: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async list(): Promise<string> {
    const listed = await this.client.list("v1", "Secret", {
      namespace: this.namespace,
      labelSelector: CLUSTER_SELECTOR,
    });
    this.secrets = new Map(listed.items.map((s) => [s.metadata.name, s]));
    this.publish();
    return listed.resourceVersion;
  }

  private publish(): void {
    const before = this.current;
    this.current = entriesOf([...this.secrets.values()]);
    const changed = new Set<string>();
    for (const [name, e] of this.current) {
      const was = before.get(name);
      if (!was || versionOf(was) !== versionOf(e)) changed.add(name);
    }
    for (const name of before.keys()) if (!this.current.has(name)) changed.add(name);
    for (const [name, e] of this.current)
      if ("error" in e && !before.has(name)) this.log?.warn({ secret: e.secret }, e.error);
    if (changed.size > 0) for (const l of this.listeners) l([...changed]);
  }

  private async run(ready: () => void): Promise<void> {
    const signal = this.abort.signal;
    let rv: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!rv) {
          rv = await this.list();
          ready();
        }
        rv = await this.client.watch(
          "v1",
          "Secret",
          { namespace: this.namespace, labelSelector: CLUSTER_SELECTOR, resourceVersion: rv, signal },
          (type, obj) => {
            if (type === "DELETED") this.secrets.delete(obj.metadata.name);
            else this.secrets.set(obj.metadata.name, obj);
            this.publish();
          },
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.status === 410) rv = undefined;
        else {
          failures++;
          rv = undefined;
          // Without the registry nothing named resolves: say so, keep trying, never hold the start.
          this.log?.warn({ err: String(err) }, "cluster registry: cannot read the cluster Secrets; retrying");
          ready();
          await new Promise((t) => setTimeout(t, Math.min(1000 * 2 ** failures, 30_000)).unref());
        }
      }
    }
  }
}

function versionOf(e: RegistryEntry): string {
  return "error" in e ? `error:${e.error}` : e.version;
}
