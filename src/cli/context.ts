// What every repository-bound command needs: the config, a cluster client, and the reconciler
// over the local git repository. Problems a person can fix become one clear line (UsageError).
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { LevelWithSilent } from "pino";
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfigFile } from "../config/load.ts";
import { destinationName, type SyncwardConfig } from "../config/types.ts";
import { KubeClient } from "../kube/client.ts";
import { ClusterRegistry } from "../kube/cluster-registry.ts";
import { Clusters } from "../kube/clusters.ts";
import { createLogger } from "../observability/logger.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { Emit } from "../reconciler/events.ts";
import { Reconciler } from "../reconciler/reconciler.ts";
import { LocalGitSource } from "../reconciler/revision-source.ts";
import { checkoutApp } from "./app-identity.ts";
import { bindProjectsForCheckout } from "./project-binding.ts";
import { UsageError } from "./usage-error.ts";

export { UsageError } from "./usage-error.ts";

export interface GlobalOptions {
  repo?: string;
  kubeconfig?: string;
  context?: string;
  config?: string;
  app?: string;
  "state-namespace"?: string;
  projects?: string;
  "health-config"?: string;
}

export interface CliContext {
  repo: string;
  /** The app's identity (app-identity.ts): what its state and tracking are named by. */
  app: string;
  /** The app's name for people: `--app` or the checkout directory's name. */
  appName: string;
  config: SyncwardConfig;
  /** The operator's project this repository deploys under; undefined without projects. */
  project?: string;
  client: KubeClient;
  reconciler: Reconciler;
  close(): Promise<void>;
}

export function treeCacheDir(): string {
  return (
    process.env.SYNCWARD_TREE_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "syncward", "trees")
  );
}

export async function loadRepoConfig(opts: GlobalOptions): Promise<{ repo: string; config: SyncwardConfig }> {
  const repo = resolve(opts.repo ?? process.cwd());
  if (!existsSync(join(repo, ".git")) || !statSync(repo).isDirectory()) {
    throw new UsageError(
      `${repo} is not a git repository (run syncward inside your manifests repository, or pass --repo PATH)`,
    );
  }
  const file = opts.config ? resolve(opts.config) : join(repo, DEFAULT_CONFIG_FILE);
  if (!existsSync(file)) {
    throw new UsageError(
      `no syncward config at ${file}: create ${DEFAULT_CONFIG_FILE} in the repository, or pass --config FILE`,
    );
  }
  try {
    return { repo, config: await loadConfigFile(file) };
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

export function makeClient(opts: GlobalOptions): KubeClient {
  try {
    return KubeClient.fromKubeconfig({ kubeconfig: opts.kubeconfig, context: opts.context });
  } catch (err) {
    throw new UsageError(`kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The CLI's clusters: the contexts of its kubeconfig, and (read once, only when an environment
 * names a cluster that is no context) the registry in the state namespace of the current context.
 */
async function cliClusters(opts: GlobalOptions, own: KubeClient, config: SyncwardConfig): Promise<Clusters> {
  const kubeconfig = Clusters.kubeconfigOf(opts.kubeconfig);
  const contexts = new Set(kubeconfig?.doc.contexts.map((c) => c.name) ?? []);
  const unnamed = config.environments.some((e) => {
    const name = destinationName(e.destination);
    return name !== undefined && !contexts.has(name);
  });
  let registry: ClusterRegistry | undefined;
  if (unnamed) {
    registry = new ClusterRegistry(own, opts["state-namespace"] ?? "syncward");
    // Not allowed to read it (or no such namespace): names resolve among the contexts only.
    await registry.load().catch(() => undefined);
  }
  return new Clusters({ own, registry, kubeconfig });
}

export async function openContext(
  opts: GlobalOptions,
  extra: {
    emit?: Emit;
    log?: Logger;
    leases?: boolean;
    leaseDurationSeconds?: number;
    watch?: boolean;
    pollIntervalMs?: number;
    identity?: string;
  } = {},
): Promise<CliContext> {
  const loaded = await loadRepoConfig(opts);
  const { repo } = loaded;
  const { config, project, healthChecks } = await bindProjectsForCheckout(
    opts.projects,
    repo,
    loaded.config,
    opts["health-config"],
  );
  const client = makeClient(opts);
  const clusters = await cliClusters(opts, client, config);
  const app = checkoutApp(repo, opts.app);
  const reconciler = new Reconciler({
    app: app.id,
    repository: app.name,
    legacy: app.legacy ? { app: app.legacy } : undefined,
    config,
    healthChecks,
    client,
    clusters,
    source: new LocalGitSource(repo, treeCacheDir()),
    emit: extra.emit ?? (() => undefined),
    // Quiet unless asked (LOG_LEVEL=debug): the commands print what a person needs.
    log: extra.log ?? createLogger({ level: (process.env.LOG_LEVEL as LevelWithSilent) ?? "silent", fd: 2 }),
    stateNamespace: opts["state-namespace"] ?? "syncward",
    identity: extra.identity ?? `cli-${process.pid}`,
    leases: extra.leases ?? false,
    leaseDurationSeconds: extra.leaseDurationSeconds,
    watch: extra.watch ?? false,
    pollIntervalMs: extra.pollIntervalMs ?? 0,
  });
  // The state of this checkout from before identities moves over first (once; nothing when moved).
  await reconciler.upgrade().catch((err: unknown) => {
    client.close();
    throw err;
  });
  return {
    repo,
    app: app.id,
    appName: app.name,
    config,
    project,
    client,
    reconciler,
    async close() {
      await reconciler.stop();
      clusters.close();
      client.close();
    },
  };
}
