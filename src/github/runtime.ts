// One repository's syncward: its config (read from the default branch only, so a pull request
// cannot weaken its own policy), a reconciler over GitHub revisions, and the reporter that turns
// the reconciler's events into check runs, deployments and comments.
import { ConfigError, parseConfig } from "../config/load.ts";
import type { EnvironmentConfig, ResourceCustomizations, SyncwardConfig } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import type { KubeObject } from "../kube/object.ts";
import { Notifier } from "../notify/notifier.ts";
import { type Placement, placementOf } from "../observability/placement.ts";
import { bindRepository } from "../projects/bind.ts";
import { healthChecksOf } from "../projects/health-checks.ts";
import { MembershipLookupError } from "../projects/match.ts";
import { narrowConfig } from "../projects/narrow.ts";
import { configMapPins } from "../projects/pins-configmap.ts";
import type { Project, ProjectsFile } from "../projects/types.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import { type ClusterResolver, Reconciler } from "../reconciler/reconciler.ts";
import { Shard } from "../reconciler/shard.ts";
import { githubAppId, legacyAppName } from "../state/identity.ts";
import type { HandedOverRepositoryEvent } from "../state/types.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import type { Cached } from "../util/cached.ts";
import { reportConfigError } from "./config-check.ts";
import { ConfigPoll } from "./config-poll.ts";
import { GitHubSource } from "./github-source.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { PreviewQueue } from "./preview.ts";
import { membershipRefusal, ProjectRefusal, repositoryFactsOf } from "./project-refusal.ts";
import { GitHubReporter } from "./reporter.ts";
import { announcedPreview, announcedRepository, announceRepository } from "./repository-announce.ts";
import { GitHubRequiredChecks } from "./required-checks.ts";

export const CONFIG_PATH = ".github/syncward.yml";
/** Where the config may be, in the order they are looked for (`.yml` wins when both exist). */
export const CONFIG_PATHS = [CONFIG_PATH, ".github/syncward.yaml"] as const;

export function isConfigPath(file: string): boolean {
  return (CONFIG_PATHS as readonly string[]).includes(file);
}

export interface AppDeps {
  client: KubeClient;
  /** Each environment's destination cluster (kube/clusters.ts); absent: `client` for every one. */
  clusters?: ClusterResolver;
  stateNamespace: string;
  cacheDir: string;
  identity: string;
  leases: boolean;
  /** Shares the repositories' leases out among the replicas; made by Runtimes when leases are on. */
  shard?: Shard;
  /** Reads a repository's config again and rebuilds its runtime (set by Runtimes). */
  reload?: (info: RepoInfo) => void;
  /** Re-reads the default branch's config if its head moved (set by Runtimes; config-poll.ts). */
  configPoll?: (info: RepoInfo) => void;
  /** Follows a repository event another replica handed over: stops, or moves to the new name (set by Runtimes). */
  repositoryEvent?: (info: RepoInfo, event: HandedOverRepositoryEvent) => void;
  /** The Pod this replica runs in (its membership Lease is deleted with it). */
  pod?: { name: string; uid: string };
  watch: boolean;
  pollIntervalMs?: number;
  /** Also told every reconciler event, with where its environment deploys (metrics). */
  onEvent?: (event: ReconcilerEvent, placement?: Placement) => void;
  /** Told each app's configured environments, for the state-backed `syncward_app_info` (AppStatusFollower). */
  appStatus?: {
    track(app: string, environments: Array<{ name: string; placement: Placement }>): void;
    untrack(app: string): void;
  };
  /** Start each repository's reconcile loop when its runtime is created (default true). */
  autoStart?: boolean;
  /**
   * How long stopping a runtime waits for reports being sent (ms; default 10 s) before it drops
   * them: a request Octokit's throttling holds until a rate limit resets must not hold up the
   * repository's next delivery, which waits for the old runtime to stop.
   */
  reportStopMs?: number;
  /** Waits between attempts of an outbound notification (ms; default 1 s doubling, 6 retries). */
  notifyRetryMs?: number[];
  /** How soon reports that GitHub could not take are sent again (ms; default 5 s doubling to 5 min). */
  reportRetryMs?: { initial: number; max: number };
  log: Logger;
  auth(installationId: number): Promise<Octokit>;
  /** The operator's projects (the ConfigMap syncward-projects); absent or undefined: none, every repository on its own. */
  projects?: () => Promise<ProjectsFile | undefined>;
}

export interface RepoInfo extends RepoRef {
  /**
   * GitHub's id of the repository: the app's identity (state/identity.ts). Every webhook carries
   * it; where it is missing (a mark or an event written before identities) it is read from GitHub.
   */
  id?: number;
  installationId: number;
  htmlUrl: string;
  defaultBranch: string;
}

export class RepoRuntime {
  readonly source: GitHubSource;
  readonly reconciler: Reconciler;
  readonly reporter: GitHubReporter;
  /** Pull-request previews, apart from the environments' own lanes. */
  readonly previews: PreviewQueue;
  /** Outbound webhooks of the environments' `notify` targets. */
  readonly notifier: Notifier;

  constructor(
    readonly info: RepoInfo,
    readonly config: SyncwardConfig,
    private readonly deps: AppDeps,
    /** The operator's custom health checks for the repository's project. */
    healthChecks?: ResourceCustomizations,
  ) {
    const repo = { owner: info.owner, repo: info.repo };
    const octokit = () => deps.auth(info.installationId);
    this.notifier = new Notifier({ log: deps.log, retryMs: deps.notifyRetryMs });
    this.source = new GitHubSource(repo, octokit, deps.cacheDir);
    let reporter: GitHubReporter | undefined;
    const placement = (env: EnvironmentConfig) => placementOf(env, deps.client.contextName);
    deps.appStatus?.track(
      appIdOf(info),
      config.environments.map((e) => ({ name: e.name, placement: placement(e) })),
    );
    const repository = `${info.owner}/${info.repo}`;
    this.reconciler = new Reconciler({
      app: appIdOf(info),
      repository,
      legacy: { app: legacyAppName(info.owner, info.repo), repository },
      config,
      healthChecks,
      client: deps.client,
      clusters: deps.clusters,
      source: this.source,
      checks: new GitHubRequiredChecks(octokit, repo),
      emit: (e) => {
        reporter?.handle(e);
        const env = config.environments.find((x) => x.name === e.env);
        if (env) this.notifier.handle(e, env);
        deps.onEvent?.(e, env && placement(env));
      },
      log: deps.log,
      stateNamespace: deps.stateNamespace,
      identity: deps.identity,
      leases: deps.leases,
      shard: deps.shard,
      watch: deps.watch,
      onConfigPushed: deps.reload && (() => deps.reload?.(info)),
      onRepositoryEvent: deps.repositoryEvent && ((e) => deps.repositoryEvent?.(info, e)),
      pollIntervalMs: deps.pollIntervalMs,
    });
    reporter = new GitHubReporter({
      repo,
      htmlUrl: info.htmlUrl,
      octokit,
      reconciler: this.reconciler,
      log: deps.log,
      retryMs: deps.reportRetryMs,
    });
    this.reporter = reporter;
    this.previews = new PreviewQueue(deps.log);
  }

  get log(): Logger {
    return this.deps.log;
  }

  get ref(): RepoRef {
    return { owner: this.info.owner, repo: this.info.repo };
  }

  private configTimer: NodeJS.Timeout | undefined;

  start(): void {
    this.reconciler.start();
    // The config is polled as often as its most often polled environment.
    const poll = this.deps.configPoll;
    const every =
      this.deps.pollIntervalMs ?? Math.min(...this.config.environments.map((e) => e.pollInterval));
    if (poll && every > 0 && Number.isFinite(every)) {
      clearInterval(this.configTimer);
      this.configTimer = setInterval(() => poll(this.info), every);
      this.configTimer.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.configTimer);
    await this.reconciler.stop();
    this.notifier.close();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), this.deps.reportStopMs ?? 10_000);
    });
    const drained = await Promise.race([this.reporter.idle(), bound]);
    clearTimeout(timer);
    if (drained === "late") {
      this.deps.log.warn(
        { repo: `${this.info.owner}/${this.info.repo}`, backlog: this.reporter.backlog },
        "reports still being sent to GitHub when the runtime stopped are dropped",
      );
      this.reporter.close();
    }
  }
}

/** The config file's text at `ref` and where it was found; undefined when there is none. */
export async function readConfigText(
  gh: Octokit,
  repo: RepoRef,
  ref: string,
): Promise<{ path: string; text: string } | undefined> {
  for (const path of CONFIG_PATHS) {
    try {
      const { data } = await gh.rest.repos.getContent({ ...repo, path, ref });
      if (Array.isArray(data) || data.type !== "file" || !("content" in data)) continue;
      return { path, text: Buffer.from(data.content, "base64").toString("utf8") };
    } catch (err) {
      if ((err as { status?: number }).status !== 404) throw err;
    }
  }
  return undefined;
}

/** The config at `ref` (the default branch's head unless given); undefined when the repository has none. */
export async function readConfig(
  gh: Octokit,
  info: RepoInfo,
  ref: string = info.defaultBranch,
): Promise<SyncwardConfig | undefined> {
  const found = await readConfigText(gh, { owner: info.owner, repo: info.repo }, ref);
  return found && parseConfig(found.text, found.path);
}

/** Each environment remembers the default-branch commit its config was read at, when known. */
function withConfigRevision(config: SyncwardConfig, configRevision: string | undefined): SyncwardConfig {
  if (!configRevision) return config;
  return { ...config, environments: config.environments.map((e) => ({ ...e, configRevision })) };
}

const keyOf = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();

/** The app of a repository: its identity, from GitHub's id (state/identity.ts). */
export function appIdOf(info: RepoInfo): string {
  if (info.id === undefined) throw new Error(`the id of ${info.owner}/${info.repo} is not known yet`);
  return githubAppId(info.id);
}

/** `info` with GitHub's id of the repository, read from GitHub when the event that named it lacked it. */
async function withId(gh: Octokit, info: RepoInfo): Promise<RepoInfo> {
  if (info.id !== undefined) return info;
  const { data } = await gh.rest.repos.get({ owner: info.owner, repo: info.repo });
  info.id = data.id;
  return info;
}

/** Every repository's runtime, created on its first event and rebuilt when its config changes. */
export class Runtimes {
  private readonly byRepo = new Map<string, RepoRuntime>();
  private readonly pending = new Map<string, Promise<RepoRuntime | undefined>>();
  /** The default-branch commit the config in force was read at, when known. */
  private readonly configAt = new Map<string, string>();
  /** The text of the config in force, which a poll compares the default branch's with. */
  private readonly configText = new Map<string, string>();
  private readonly deps: AppDeps;
  /**
   * Told when another replica marks a preview's Lease (it started that preview) or deletes it (it
   * ended it): the preview manager runs a Reconciler for it here too, so that whichever replica
   * the shard gives it to syncs it, or stops the one here. Set by the preview manager.
   */
  onPreviewAnnounced?: (key: string) => void;
  /** The default branch's config, re-read on the poll (a lost push webhook). */
  readonly configPoll: ConfigPoll;

  constructor(deps: AppDeps) {
    // One shard per process: every repository's app Lease is shared out among the replicas.
    const shard =
      deps.leases && !deps.shard
        ? new Shard({
            client: deps.client,
            namespace: deps.stateNamespace,
            identity: deps.identity,
            log: deps.log,
            pod: deps.pod,
            onUnknownLease: (lease) => void this.discover(lease),
            // A preview another replica ended: its Reconciler here stops now, not at the sweep.
            onLeaseDeleted: (lease) => {
              const preview = announcedPreview(lease);
              if (preview !== undefined) this.onPreviewAnnounced?.(preview);
            },
          })
        : deps.shard;
    // A config pushed to another replica (seen in the state it handed over) is read here too.
    const reload = (info: RepoInfo) =>
      void this.for(info, true).catch((err) =>
        deps.log.warn({ err, repo: `${info.owner}/${info.repo}` }, "could not read the changed config"),
      );
    // The repository removed or renamed, as another replica was told: stopped (and moved) here too.
    const repositoryEvent = (info: RepoInfo, event: HandedOverRepositoryEvent) =>
      void this.follow(info, event).catch((err) =>
        deps.log.warn(
          { err, repo: `${info.owner}/${info.repo}`, action: event.action },
          "could not follow a repository event handed over by another replica",
        ),
      );
    this.configPoll = new ConfigPoll({
      head: (info) => {
        const rt = this.byRepo.get(keyOf(info.owner, info.repo));
        return rt ? rt.source.head(info.defaultBranch) : Promise.reject(new Error("not running"));
      },
      readText: async (info, sha) =>
        (
          await readConfigText(
            await deps.auth(info.installationId),
            { owner: info.owner, repo: info.repo },
            sha,
          )
        )?.text,
      inForce: (info) => {
        const key = keyOf(info.owner, info.repo);
        const text = this.configText.get(key);
        if (text === undefined || !this.byRepo.has(key) || this.pending.has(key)) return undefined;
        const at = this.configAt.get(key);
        return at ? { text, at } : { text };
      },
      reload: async (info, sha) => void (await this.for(info, true, sha)),
      report: async (info, sha, err) =>
        reportConfigError(
          await deps.auth(info.installationId),
          { owner: info.owner, repo: info.repo },
          sha,
          err,
        ),
      log: deps.log,
    });
    const configPoll = (info: RepoInfo) =>
      void this.configPoll
        .poll(info)
        .catch((err) =>
          deps.log.warn(
            { err, repo: `${info.owner}/${info.repo}` },
            "could not poll the default branch's config",
          ),
        );
    this.deps = { ...deps, shard, reload, repositoryEvent, configPoll };
    // A replica that runs no repository yet hears of those another replica starts.
    if (shard && shard !== deps.shard && (deps.autoStart ?? true)) shard.start();
  }

  /** The runtime of a repository, or undefined when it has no syncward config. Throws ConfigError for an invalid one. */
  async for(info: RepoInfo, reload = false, configRevision?: string): Promise<RepoRuntime | undefined> {
    const key = keyOf(info.owner, info.repo);
    const existing = this.byRepo.get(key);
    // After an uninstall and a reinstall GitHub gives the installation a new id: every call of the
    // runtime (reporter, source) asks for a token of the id it holds, so it must follow.
    if (existing) existing.info.installationId = info.installationId;
    if (existing && !reload) return existing;
    const before = this.pending.get(key);
    if (before && !reload) return before;
    // Reloads queue, each after the one before it (whatever became of it), rather than merge into
    // the one in flight: each config push is read at its own commit, and the last one wins.
    const load = () => this.load(info, key, configRevision);
    const loading: Promise<RepoRuntime | undefined> = (before ? before.then(load, load) : load()).finally(
      () => {
        if (this.pending.get(key) === loading) this.pending.delete(key);
      },
    );
    this.pending.set(key, loading);
    return loading;
  }

  private async load(info: RepoInfo, key: string, configRevision?: string): Promise<RepoRuntime | undefined> {
    const gh = await this.deps.auth(info.installationId);
    await withId(gh, info);
    const inForce = this.configAt.get(key);
    const running = this.byRepo.get(key);
    // Push webhooks can arrive out of order: a reload of a commit the config in force already
    // contains is dropped, or it would bring back an older config.
    if (running && configRevision && inForce && (await this.contains(gh, info, inForce, configRevision)))
      return running;
    const found = await readConfigText(
      gh,
      { owner: info.owner, repo: info.repo },
      configRevision ?? info.defaultBranch,
    );
    const config = found && parseConfig(found.text, found.path);
    await this.byRepo.get(key)?.stop();
    this.byRepo.delete(key);
    this.configAt.delete(key);
    this.configText.delete(key);
    if (!config || !found) {
      this.configPoll.forget(info);
      this.deps.appStatus?.untrack(appIdOf(info));
      return undefined;
    }
    const at = configRevision ?? (await this.defaultHeadFor(gh, info, config));
    const bound = await this.underProject(gh, info, config);
    const runtime = new RepoRuntime(info, withConfigRevision(bound, at), this.deps, this.healthOf.get(key));
    this.byRepo.set(key, runtime);
    if (at) this.configAt.set(key, at);
    this.configText.set(key, found.text);
    this.configPoll.confirmed(info, at);
    if (this.deps.autoStart ?? true) runtime.start();
    await this.announce(info, info);
    return runtime;
  }

  /**
   * Whether `commit` is `inForce` or one of its ancestors (GitHub's compare: "behind" or
   * "identical"). Unreadable: false, and the reload goes ahead (a push's commit is read as it is).
   */
  private async contains(gh: Octokit, info: RepoInfo, inForce: string, commit: string): Promise<boolean> {
    if (inForce === commit) return true;
    try {
      const { data } = await gh.rest.repos.compareCommitsWithBasehead({
        owner: info.owner,
        repo: info.repo,
        basehead: `${inForce}...${commit}`,
        per_page: 1,
      });
      if (data.status !== "behind" && data.status !== "identical") return false;
      this.deps.log.info(
        { repo: `${info.owner}/${info.repo}`, inForce, commit },
        "a config reload older than the config in force is dropped",
      );
      return true;
    } catch (err) {
      this.deps.log.warn(
        { err, repo: `${info.owner}/${info.repo}`, inForce, commit },
        "could not tell whether a config push is older than the config in force; it is read",
      );
      return false;
    }
  }

  /**
   * The default branch's head when the config was read, for a config with an environment that
   * tracks another branch (its approvals look at the config commits since: config-range.ts).
   * Read after the config, so it may be a later commit: that only widens who counts. Unreadable:
   * none, and such an approval after a config change is refused until a config push records one.
   */
  private async defaultHeadFor(
    gh: Octokit,
    info: RepoInfo,
    config: SyncwardConfig,
  ): Promise<string | undefined> {
    if (config.environments.every((e) => e.source.branch === info.defaultBranch)) return undefined;
    try {
      const { data } = await gh.rest.repos.getBranch({
        owner: info.owner,
        repo: info.repo,
        branch: info.defaultBranch,
      });
      return data.commit.sha;
    } catch (err) {
      this.deps.log.warn(
        { err, repo: `${info.owner}/${info.repo}` },
        "could not read the default branch's head: approvals after a config change wait for a config push",
      );
      return undefined;
    }
  }

  /** The config narrowed by the repository's project. @throws ProjectRefusal when none covers it. */
  private async underProject(gh: Octokit, info: RepoInfo, config: SyncwardConfig): Promise<SyncwardConfig> {
    this.healthOf.delete(keyOf(info.owner, info.repo));
    if (!this.deps.projects) return config;
    this.projectOf.delete(keyOf(info.owner, info.repo));
    let projects: ProjectsFile | undefined;
    try {
      projects = await this.deps.projects();
    } catch (err) {
      // The operator's document, not the repository's config: held, and said so on its own check.
      if (!(err instanceof ConfigError)) throw err;
      throw new ProjectRefusal(
        `the operator's projects cannot be read, so syncward deploys nothing until they are fixed:\n${err.message}`,
      );
    }
    try {
      const ref = { owner: info.owner, repo: info.repo };
      const pins = configMapPins(this.deps.client, this.deps.stateNamespace);
      const facts = repositoryFactsOf(gh, ref, pins, this.properties, info.installationId);
      const binding = await bindRepository(projects, `${info.owner}/${info.repo}`, config, facts);
      if (binding.kind === "unmatched") throw new ProjectRefusal(binding.reason);
      if (binding.kind === "matched")
        this.projectOf.set(keyOf(info.owner, info.repo), {
          project: binding.project,
          others: projects?.projects ?? [],
        });
      const project = binding.kind === "matched" ? binding.project : undefined;
      this.healthOf.set(keyOf(info.owner, info.repo), healthChecksOf(projects, project));
      return binding.config;
    } catch (err) {
      throw err instanceof MembershipLookupError ? membershipRefusal(err) : err;
    }
  }

  /** The project each running repository deploys under (none without projects). */
  private readonly projectOf = new Map<string, { project: Project; others: readonly Project[] }>();
  /** The operator's project a running repository deploys under, if any (previews are placed under it). */
  projectFor(owner: string, repo: string): Project | undefined {
    return this.projectOf.get(keyOf(owner, repo))?.project;
  }

  /** What every runtime is built with (the preview manager runs its reconcilers with the same). */
  get shared(): AppDeps {
    return this.deps;
  }

  /** The operator's custom health checks each running repository is judged by (projects/health-checks.ts). */
  private readonly healthOf = new Map<string, ResourceCustomizations | undefined>();

  /**
   * `config` as the repository's project sees it (narrowed, with its violations); unchanged
   * without projects. For a proposed configuration, before it is merged.
   */
  underItsProject(owner: string, repo: string, config: SyncwardConfig): SyncwardConfig {
    const bound = this.projectOf.get(keyOf(owner, repo));
    return bound
      ? narrowConfig(bound.project, config, [], { fullName: `${owner}/${repo}`, others: bound.others })
      : config;
  }

  private readonly refusals = new BoundedMap<string, true>(1000);
  /** Custom property definitions' values_editable_by, per installation and property, for a minute (project-refusal.ts). */
  private readonly properties = new Map<string, Cached<string>>();

  /** True the first time a refusal (repository, head, reason) is seen: it is reported once. */
  firstRefusal(key: string): boolean {
    if (this.refusals.has(key)) return false;
    this.refusals.set(key, true);
    return true;
  }

  all(): RepoRuntime[] {
    return [...this.byRepo.values()];
  }

  /** The runtime of a repository already running here, without starting one. */
  running(owner: string, repo: string): RepoRuntime | undefined {
    return this.byRepo.get(keyOf(owner, repo));
  }

  /**
   * Stops a repository's runtime for good (uninstalled, removed from the installation, archived,
   * deleted): its leases are released and nothing more is written. With leases, every other replica
   * is told through the environments' state first (the one holding the app stops its syncs).
   * Returns whether one ran here.
   */
  async remove(owner: string, repo: string): Promise<boolean> {
    const runtime = this.byRepo.get(keyOf(owner, repo));
    // The mark first: a replica stopping on the event below must not find the repository announced.
    if (runtime) await this.announce(runtime.info, undefined);
    if (runtime && this.deps.leases)
      await runtime.reconciler
        .handOverRepositoryEvent({ action: "removed" })
        .catch((err) =>
          this.deps.log.warn(
            { err, repo: `${owner}/${repo}` },
            "could not tell the other replicas the repository is gone; the one running it goes on",
          ),
        );
    return this.drop(owner, repo);
  }

  /** Stops a repository's runtime here. */
  private async drop(owner: string, repo: string): Promise<boolean> {
    const key = keyOf(owner, repo);
    await this.pending.get(key)?.catch(() => undefined);
    const runtime = this.byRepo.get(key);
    if (!runtime) return false;
    this.byRepo.delete(key);
    this.deps.appStatus?.untrack(appIdOf(runtime.info));
    await runtime.stop();
    return true;
  }

  /**
   * A repository renamed or transferred: GitHub keeps its id, so its app, state, Leases and
   * objects' tracking stay as they are. The runtime under the old name stops (told to the other
   * replicas through the state, as a removal is) and starts again under the new name, which the
   * state records for people on its next write. Returns the environments that carried over.
   */
  async rename(oldOwner: string, oldRepo: string, info: RepoInfo): Promise<string[]> {
    const old = this.byRepo.get(keyOf(oldOwner, oldRepo));
    if (old && info.id === undefined) info.id = old.info.id;
    if (old) await this.announce(old.info, undefined);
    if (old && this.deps.leases)
      await old.reconciler
        .handOverRepositoryEvent({ action: "renamed", to: { ...info } })
        .catch((err) =>
          this.deps.log.warn(
            { err, repo: `${oldOwner}/${oldRepo}` },
            "could not tell the other replicas the repository was renamed; the one running it goes on",
          ),
        );
    await this.drop(oldOwner, oldRepo);
    const runtime = await this.for(info, true);
    return runtime?.config.environments.map((e) => e.name) ?? [];
  }

  /**
   * Marks the app's Lease with the repository it runs (undefined: unmarks it), so that the other
   * replicas start it too (repository-announce.ts). Only with replicas; a failure is logged.
   */
  private async announce(app: RepoInfo, info: RepoInfo | undefined): Promise<void> {
    if (!this.deps.leases) return;
    await announceRepository(this.deps.client, this.deps.stateNamespace, appIdOf(app), info).catch((err) =>
      this.deps.log.warn(
        { err, repo: `${app.owner}/${app.repo}` },
        "could not tell the other replicas which repositories run here",
      ),
    );
  }

  /**
   * The Lease of an app this replica does not run, marked with its repository by another replica:
   * its runtime starts here too (standing by unless the shard gives it the app). The mark is read
   * again first: a repository just stopped for good has it taken off before the stop is handed over.
   */
  private async discover(lease: KubeObject): Promise<void> {
    const preview = announcedPreview(lease);
    if (preview !== undefined) return this.onPreviewAnnounced?.(preview);
    const info = announcedRepository(lease);
    if (!info || this.running(info.owner, info.repo)) return;
    try {
      const fresh = await this.deps.client.get(
        "coordination.k8s.io/v1",
        "Lease",
        this.deps.stateNamespace,
        lease.metadata.name,
      );
      const now = fresh && announcedRepository(fresh);
      if (!now || keyOf(now.owner, now.repo) !== keyOf(info.owner, info.repo)) return;
      const started = await this.for(now);
      this.deps.log.info(
        { repo: `${now.owner}/${now.repo}`, started: started !== undefined },
        "repository started on another replica: running it here too",
      );
    } catch (err) {
      this.deps.log.warn(
        { err, repo: `${info.owner}/${info.repo}` },
        "could not start a repository another replica runs",
      );
    }
  }

  /**
   * Another replica was told the repository is gone or renamed: its runtime here stops (the holder's
   * syncs end, its Lease is released), and after a rename the runtime under the new name starts
   * here, to run once the replica that moves the state lets go of the new name's Lease.
   */
  private async follow(info: RepoInfo, event: HandedOverRepositoryEvent): Promise<void> {
    const stopped = await this.drop(info.owner, info.repo);
    this.deps.log.info(
      { repo: `${info.owner}/${info.repo}`, action: event.action, to: event.to, stopped },
      "repository event handed over by another replica: stopped here",
    );
    if (event.action === "renamed" && event.to) await this.for(event.to);
  }

  /** Stops every runtime of an installation (uninstalled or suspended); returns their names. */
  async removeInstallation(installationId: number): Promise<string[]> {
    const gone = this.all().filter((r) => r.info.installationId === installationId);
    await Promise.all(gone.map((r) => this.remove(r.info.owner, r.info.repo)));
    return gone.map((r) => `${r.info.owner}/${r.info.repo}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((r) => r.stop()));
    this.byRepo.clear();
    await this.deps.shard?.stop();
  }
}

export { ConfigError };
