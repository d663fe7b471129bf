// Which cluster an environment deploys to, and the one client the process keeps for it. The one
// place a destination becomes a connection (the reconciler asks here, nowhere else):
//   - no name, no inCluster: syncward's own cluster (the process's client);
//   - `inCluster: true`: the Pod's service account;
//   - a name (destination.cluster, or destination.context, its synonym): a cluster of the registry
//     (a Secret in syncward's namespace), else a context of the process's kubeconfig; else an
//     UnknownDestinationError that names the destination and lists the clusters that exist.
// One client per cluster, shared by every environment there (so one watch hub, one set of
// connections); a rotated Secret makes a new client, the old one closes a while later.
import { KubeClient, type KubeClientOptions } from "./client.ts";
import { ClusterRegistry } from "./cluster-registry.ts";
import { findKubeconfig, IN_CLUSTER_CONTEXT, inClusterConfig, SERVICE_ACCOUNT_DIR } from "./kubeconfig.ts";
import { type KubeconfigDoc, type KubeSelection, selectContext } from "./kubeconfig-parse.ts";

export interface Destination {
  cluster?: string;
  context?: string;
  inCluster?: boolean;
}

export class UnknownDestinationError extends Error {
  override readonly name = "UnknownDestinationError";
  constructor(
    readonly destination: string,
    why: string,
  ) {
    super(why);
  }
}

/** What a destination resolves to, or undefined for syncward's own cluster. Pure. */
export function destinationKey(d: Destination): string | undefined {
  if (d.inCluster) return IN_CLUSTER_CONTEXT;
  return d.cluster ?? d.context;
}

/** The name a destination's cluster goes by in messages and metrics; `own` names syncward's own. */
export function clusterNameOf(d: Destination, own: string): string {
  return d.cluster ?? d.context ?? (d.inCluster ? IN_CLUSTER_CONTEXT : own);
}

/** The sentence an unknown name fails with: it names the destination and the clusters that exist. */
export function unknownDestinationMessage(name: string, registry: string[], contexts: string[]): string {
  const known = [
    ...registry.map((n) => `${n} (registry)`),
    ...contexts.filter((c) => !registry.includes(c)).map((c) => `${c} (kubeconfig context)`),
  ];
  return `destination cluster "${name}" is not a cluster syncward knows: ${
    known.length > 0 ? `the clusters are ${known.join(", ")}` : "no cluster is registered"
  }. Register it (syncward cluster add ${name}) or name one of these in destination.cluster.`;
}

export interface ClustersOptions {
  /** syncward's own cluster: state, leases, the registry, and environments that name no cluster. */
  own: KubeClient;
  registry?: ClusterRegistry;
  /** The process's kubeconfig (its contexts are clusters by name); absent: none. */
  kubeconfig?: { doc: KubeconfigDoc; source: string };
  clientOptions?: Omit<KubeClientOptions, "kubeconfig" | "context">;
  env?: NodeJS.ProcessEnv;
  /** How long a replaced client (a rotated Secret) stays open for requests under way. */
  retireMs?: number;
}

export class Clusters {
  private readonly clients = new Map<string, { version: string; client: KubeClient }>();
  private readonly retiring = new Set<NodeJS.Timeout>();

  constructor(private readonly o: ClustersOptions) {}

  /** The process's kubeconfig (SYNCWARD_KUBECONFIG, KUBECONFIG, ~/.kube/config), if it has one. */
  static kubeconfigOf(file?: string): { doc: KubeconfigDoc; source: string } | undefined {
    try {
      const found = findKubeconfig({ file });
      return found.source === "in-cluster service account" ? undefined : found;
    } catch {
      return undefined;
    }
  }

  get own(): KubeClient {
    return this.o.own;
  }

  get registry(): ClusterRegistry | undefined {
    return this.o.registry;
  }

  /** Every cluster name that resolves, for messages and `syncward cluster list`. */
  names(): { registry: string[]; contexts: string[] } {
    const registry = [...(this.o.registry?.entries.keys() ?? [])].sort();
    const contexts = (this.o.kubeconfig?.doc.contexts ?? []).map((c) => c.name).sort();
    return { registry, contexts };
  }

  /** The client of a destination; throws UnknownDestinationError before any request is made. */
  clientFor(d: Destination): KubeClient {
    const key = destinationKey(d);
    if (key === undefined) return this.o.own;
    if (d.inCluster) {
      try {
        return this.cached(IN_CLUSTER_CONTEXT, "", () => this.inCluster());
      } catch (err) {
        throw new UnknownDestinationError(key, `destination inCluster: ${(err as Error).message}`);
      }
    }
    const entry = this.o.registry?.entries.get(key);
    if (entry && "error" in entry)
      throw new UnknownDestinationError(key, `destination cluster "${key}": ${entry.error}`);
    if (entry)
      return this.cached(`registry:${key}`, entry.version, () =>
        this.fromSelection(entry.selection, `cluster ${key}`),
      );
    const doc = this.o.kubeconfig?.doc;
    if (doc?.contexts.some((c) => c.name === key)) {
      const source = this.o.kubeconfig?.source ?? "kubeconfig";
      // The context syncward itself runs on is its own client: one hub and pool, not two.
      if (this.o.own.server && this.o.own.contextName === key) return this.o.own;
      return this.cached(`context:${key}`, "", () =>
        this.fromSelection(selectContext(doc, source, key), source),
      );
    }
    const { registry, contexts } = this.names();
    throw new UnknownDestinationError(key, unknownDestinationMessage(key, registry, contexts));
  }

  /** Called with the names of registry clusters added, rotated or removed. */
  onChange(listener: (names: string[]) => void): () => void {
    return this.o.registry?.onChange(listener) ?? (() => undefined);
  }

  /** The clients made so far, by cluster name (metrics, tests). */
  get connected(): ReadonlyMap<string, KubeClient> {
    return new Map([...this.clients].map(([k, v]) => [k.replace(/^(registry|context):/, ""), v.client]));
  }

  close(): void {
    for (const t of this.retiring) clearTimeout(t);
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }

  private cached(key: string, version: string, make: () => KubeClient): KubeClient {
    const had = this.clients.get(key);
    if (had && had.version === version) return had.client;
    let client: KubeClient;
    try {
      client = make();
    } catch (err) {
      if (err instanceof UnknownDestinationError) throw err;
      throw new UnknownDestinationError(
        key,
        `destination cluster "${key.replace(/^\w+:/, "")}": ${(err as Error).message}`,
      );
    }
    this.clients.set(key, { version, client });
    if (had) {
      const t = setTimeout(() => {
        this.retiring.delete(t);
        had.client.close();
      }, this.o.retireMs ?? 120_000);
      t.unref();
      this.retiring.add(t);
    }
    return client;
  }

  private fromSelection(selection: KubeSelection, source: string): KubeClient {
    return KubeClient.fromSelection(selection, source, this.o.clientOptions);
  }

  private inCluster(): KubeClient {
    const doc = inClusterConfig(this.o.env ?? process.env, SERVICE_ACCOUNT_DIR);
    return this.fromSelection(selectContext(doc, "in-cluster service account"), "in-cluster service account");
  }
}

/**
 * The app's clusters: the registry in `namespace` (listed now, then watched) and the contexts of
 * the process's kubeconfig. `ready` resolves once the registry was first read (or failed to be).
 */
export function startClusters(
  own: KubeClient,
  namespace: string,
  log: { warn(obj: object, msg?: string): void },
  kubeconfigFile?: string,
): { clusters: Clusters; ready: Promise<void> } {
  const registry = new ClusterRegistry(own, namespace, log);
  const clusters = new Clusters({ own, registry, kubeconfig: Clusters.kubeconfigOf(kubeconfigFile) });
  return { clusters, ready: registry.start() };
}
