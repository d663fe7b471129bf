// The syncward GitHub App (Probot). `npm start` runs this file; tests load `syncwardApp(deps)`
// with their own cluster client and a Probot authenticated by token.
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import type { ApplicationFunction, Probot } from "probot";
import { floorsFromEnv } from "../config/floors.ts";
import { KubeClient } from "../kube/client.ts";
import { type Clusters, startClusters } from "../kube/clusters.ts";
import type { Outage } from "../kube/reachability.ts";
import { AppStatusFollower } from "../observability/app-status-follower.ts";
import { healthHandler } from "../observability/http.ts";
import { createMetrics } from "../observability/metrics.ts";
import type { Shutdown } from "../observability/shutdown.ts";
import { loadProjectsConfigMap } from "../projects/configmap.ts";
import { followProjectsConfigMap } from "../projects/follow.ts";
import { resyncIntervalMs } from "../reconciler/resync.ts";
import { limitsFromEnv } from "../source/limits.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import {
  type CheckSuiteCompletedPayload,
  onCheckSuiteCompleted,
  onStatus,
  ownAppOf,
  type StatusPayload,
} from "./checks-completed.ts";
import { countRequests, handleEvent, type Metrics } from "./events.ts";
import {
  type CheckRunPayload,
  type CheckSuitePayload,
  type CommentPayload,
  onCheckRun,
  onCheckSuiteRerequested,
  onIssueComment,
  onPullRequestConfig,
  onPullRequestMerged,
  onPullRequestPreview,
  onPush,
  type PullRequestPayload,
  type PushPayload,
} from "./handlers.ts";
import {
  onInstallation,
  onInstallationRepositories,
  onRepository,
  startInstallation,
} from "./installation-events.ts";
import type { Octokit } from "./octokit.ts";
import { forkPreviews } from "./preview.ts";
import { onPreviewComment, onPullRequestPreviewEnvironment } from "./preview-events.ts";
import { PreviewManager } from "./preview-manager.ts";
import { type AppDeps, Runtimes } from "./runtime.ts";

/** Delivery ids seen recently: a redelivery keeps its X-GitHub-Delivery, so it is ignored. */
export class RecentDeliveries {
  private readonly ids: BoundedMap<string, true>;
  constructor(capacity = 2000) {
    this.ids = new BoundedMap(capacity);
  }

  get size(): number {
    return this.ids.size;
  }

  /** True the first time an id is seen. */
  first(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.set(id, true);
    return true;
  }
}

export interface SyncwardApp {
  runtimes: Runtimes;
  /** Preview environments of pull requests (preview-manager.ts). */
  previews: PreviewManager;
  deliveries: RecentDeliveries;
}

/** Builds the app; `onReady` receives its parts (tests wait on reporters through it). */
export function syncwardApp(
  deps: Omit<AppDeps, "auth"> & {
    metrics?: Metrics /** Start every installed repository at load (production). */;
    bootstrap?: boolean;
    /** Calls back when the operator's projects change (production: polls the ConfigMap). */
    followProjects?: (onChange: () => Promise<unknown>) => void;
    /** True once the process is stopping: deliveries are refused (observability/shutdown.ts). */
    stopping?: () => boolean;
    /** The bootstrap waits for it: the cluster registry's first read. */
    clustersReady?: Promise<void>;
    /** How often preview records are checked against their pull requests (ms; default 5 min). */
    previewSweepMs?: number;
    /** Waits between teardown attempts of a preview namespace (ms). */
    previewTeardownRetryMs?: { initial: number; max: number };
  },
  onReady?: (parts: SyncwardApp) => void,
): ApplicationFunction {
  forkPreviews(); // an invalid SYNCWARD_FORK_PREVIEWS stops the app at start, not at the first fork
  floorsFromEnv(); // so does an invalid SYNCWARD_MIN_PRODUCTION_APPROVALS, not the first repository
  resyncIntervalMs(); // and an invalid SYNCWARD_RESYNC_INTERVAL, not the first environment
  return (app: Probot) => {
    const auth = async (installationId: number) =>
      countRequests((await app.auth(installationId)) as unknown as Octokit, deps.metrics);
    const runtimes = new Runtimes({ ...deps, auth });
    const previews = new PreviewManager(runtimes, runtimes.shared, {
      sweepMs: deps.previewSweepMs,
      teardownRetryMs: deps.previewTeardownRetryMs,
      teardownsPending: (n) => deps.metrics?.previewTeardownsPending?.(n),
    });
    const deliveries = new RecentDeliveries();
    const mergedPulls = new Map<string, number>();
    onReady?.({ runtimes, deliveries, previews });
    // Recorded previews resume (and the sweep starts) with the reconcile loops.
    if (deps.autoStart ?? true) previews.start();
    if (deps.bootstrap) void Promise.resolve(deps.clustersReady).then(() => bootstrap(app, runtimes, auth));
    // The operator edited the projects: every repository is loaded again under them.
    deps.followProjects?.(() => bootstrap(app, runtimes, auth, true));
    const on = handleEvent(app, deliveries, deps.metrics, deps.stopping);

    on("push", (gh, payload) =>
      onPush(runtimes, gh, payload as unknown as PushPayload, deps.cacheDir, mergedPulls),
    );
    const previewEnvironment = (gh: Octokit, payload: unknown) =>
      onPullRequestPreviewEnvironment(
        runtimes,
        previews,
        gh,
        payload as Parameters<typeof onPullRequestPreviewEnvironment>[3],
      );
    on(["pull_request.opened", "pull_request.synchronize", "pull_request.reopened"], async (gh, payload) => {
      await onPullRequestConfig(runtimes, gh, payload as unknown as PullRequestPayload);
      await onPullRequestPreview(runtimes, gh, payload as unknown as PullRequestPayload);
      await previewEnvironment(gh, payload);
    });
    on(["pull_request.labeled", "pull_request.unlabeled"], (gh, payload) => previewEnvironment(gh, payload));
    on("pull_request.closed", async (gh, payload) => {
      await previewEnvironment(gh, payload);
      await onPullRequestMerged(runtimes, gh, payload as unknown as PullRequestPayload, mergedPulls);
    });
    on("issue_comment.created", async (gh, payload) => {
      await onIssueComment(runtimes, gh, payload as unknown as CommentPayload);
      await onPreviewComment(
        runtimes,
        previews,
        gh,
        payload as unknown as Parameters<typeof onPreviewComment>[3],
      );
    });
    on(["check_run.requested_action", "check_run.rerequested"], (gh, payload) =>
      onCheckRun(runtimes, gh, payload as unknown as CheckRunPayload, app.log),
    );
    on("check_suite.rerequested", (gh, payload) =>
      onCheckSuiteRerequested(runtimes, gh, payload as unknown as CheckSuitePayload),
    );
    // Checks finishing wake the environments held for them (requireChecks), before their next poll.
    const ownApp = ownAppOf(async () => (await app.auth()) as unknown as Octokit);
    on("check_suite.completed", (_gh, payload) =>
      onCheckSuiteCompleted(runtimes, payload as unknown as CheckSuiteCompletedPayload, ownApp),
    );
    on("status", (_gh, payload) => onStatus(runtimes, payload as unknown as StatusPayload));
    // A repository syncward no longer serves keeps no preview: torn down, silently on GitHub.
    on("installation", async (gh, payload) => {
      const p = payload as unknown as Parameters<typeof onInstallation>[2];
      if (p.action === "deleted" || p.action === "suspend")
        await previews.repositoryGone({ installation: p.installation.id });
      return onInstallation(runtimes, gh, p, app.log);
    });
    on("installation_repositories", async (gh, payload) => {
      const p = payload as unknown as Parameters<typeof onInstallationRepositories>[2];
      for (const r of p.repositories_removed) await previews.repositoryGone(ownerRepo(r.full_name));
      return onInstallationRepositories(runtimes, gh, p, app.log);
    });
    on(
      [
        "repository.archived",
        "repository.unarchived",
        "repository.deleted",
        "repository.renamed",
        "repository.transferred",
      ],
      async (_gh, payload) => {
        const p = payload as unknown as Parameters<typeof onRepository>[1];
        if (p.action === "archived" || p.action === "deleted")
          await previews.repositoryGone({ owner: p.repository.owner.login, repo: p.repository.name });
        return onRepository(runtimes, p, app.log);
      },
    );
  };
}

function ownerRepo(fullName: string): { owner: string; repo: string } {
  const [owner = "", repo = ""] = fullName.split("/");
  return { owner, repo };
}

/**
 * After a restart, every installed repository with a config gets its reconcile loop back at once,
 * instead of waiting for its next webhook: the loop is level-triggered, so it converges from there.
 */
export async function bootstrap(
  app: Probot,
  runtimes: Runtimes,
  auth: (id: number) => Promise<Octokit>,
  reload = false,
): Promise<string[]> {
  const started: string[] = [];
  try {
    const appClient = (await app.auth()) as unknown as Octokit;
    const installations = await appClient.paginate(appClient.rest.apps.listInstallations, { per_page: 100 });
    for (const installation of installations) {
      if (installation.suspended_at) continue;
      started.push(
        ...(await startInstallation(runtimes, await auth(installation.id), installation.id, app.log, reload)),
      );
    }
    app.log.info({ repositories: started }, "bootstrap: reconcile loops started");
  } catch (err) {
    app.log.warn({ err }, "bootstrap failed; repositories start on their next webhook");
  }
  return started;
}

/**
 * `probot run`: the cluster from SYNCWARD_KUBECONFIG, KUBECONFIG or in-cluster config. With a
 * `shutdown` (server.ts), SIGTERM fails readiness, refuses deliveries and stops every loop.
 */
export const appWith =
  (shutdown?: Shutdown): ApplicationFunction =>
  (probot, options) => {
    limitsFromEnv(); // a malformed SYNCWARD_MAX_* stops the app at start, not at the first render
    const client = KubeClient.fromKubeconfig({
      kubeconfig: process.env.SYNCWARD_KUBECONFIG,
      context: process.env.SYNCWARD_CONTEXT,
    });
    const cacheDir =
      process.env.SYNCWARD_TREE_CACHE ??
      join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "syncward", "trees");
    // Set below, once the destination clusters exist (metrics read them only at scrape time).
    let destinations: Clusters | undefined;
    const connected = (): Array<[string, KubeClient]> => [
      [client.contextName, client],
      ...[...(destinations?.connected ?? [])].filter(([, c]) => c !== client),
    ];
    const metrics = createMetrics({
      kubernetesRequests: () => connected().map(([name, c]) => [name, c.counts.byVerbAndCode]),
      clusters: () =>
        connected().map(([name, c]): [string, Outage | undefined] => [name, c.reachability.current]),
    });
    // Ready once the cluster has answered; until then webhooks are accepted but nothing can sync.
    let clusterReachable = false;
    const probe = async (): Promise<void> => {
      try {
        await client.ping();
        clusterReachable = true;
      } catch (err) {
        probot.log.warn({ err }, "cluster not reachable yet; retrying");
        setTimeout(probe, 5000).unref();
      }
    };
    void probe();
    options.addHandler(healthHandler({ metrics, ready: () => clusterReachable && !shutdown?.stopping }));
    const stateNamespace = process.env.SYNCWARD_STATE_NAMESPACE ?? "syncward";
    // syncward_app_info from the stored state: right from start, and current with other replicas' writes.
    const appStatus = new AppStatusFollower({ client, namespace: stateNamespace, metrics, log: probot.log });
    appStatus.start();
    // Each environment's destination: the cluster Secrets in syncward's namespace, and kubeconfig contexts.
    const { clusters, ready: clustersReady } = startClusters(
      client,
      stateNamespace,
      probot.log,
      process.env.SYNCWARD_KUBECONFIG,
    );
    destinations = clusters;
    const stopping = () => shutdown?.stopping ?? false;
    return syncwardApp(
      {
        client,
        clusters,
        clustersReady,
        stateNamespace,
        projects: () => loadProjectsConfigMap(client, stateNamespace),
        followProjects: (onChange) => followProjectsConfigMap(client, stateNamespace, 10_000, onChange),
        cacheDir,
        identity: process.env.POD_NAME ?? `${hostname()}-${process.pid}`,
        pod:
          process.env.POD_NAME && process.env.POD_UID
            ? { name: process.env.POD_NAME, uid: process.env.POD_UID }
            : undefined,
        leases: true,
        watch: true,
        bootstrap: true,
        log: probot.log,
        metrics,
        onEvent: (e, placement) => metrics.recordEvent(e, placement),
        appStatus,
        stopping,
      },
      (parts) => {
        const { runtimes } = parts;
        shutdown?.add("stopping the reconcile loops and releasing every Lease", async () => {
          await parts.previews.stop();
          await runtimes.stop();
        });
        shutdown?.add("closing the cluster connection", async () => {
          await appStatus.stop();
          client.close();
        });
      },
    )(probot, options);
  };

export default appWith();
