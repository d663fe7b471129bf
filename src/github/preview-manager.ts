// Preview environments of pull requests: the lifecycle. Events (label, /preview, pushes, close)
// go through previewDecision; a preview that may start is placed under the repository's project,
// admitted by the queue, recorded, given a namespace of its own and run by a Reconciler of its own
// (its app identity is the repository's plus the preview's name, so its instances never meet the
// repository's environments). A stop tears it down until its namespace is gone. The records in
// the state namespace are the truth: a restart resumes them, and a sweep catches lost close
// webhooks and expired TTLs. With several replicas every one runs a Reconciler for every live
// preview and its app Lease picks the one that syncs and reports (preview-replicas.ts).
import { previewEnvironmentOf, previewName } from "../config/preview.ts";
import type { EnvironmentConfig, PreviewTemplate } from "../config/types.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Destination } from "../kube/clusters.ts";
import { placePreview } from "../projects/previews.ts";
import type { ProjectPreviews } from "../projects/types.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import {
  type AdmissionOutcome,
  admitPreview,
  PreviewAdmissionTickets,
  queuedOf,
  releaseClaim,
  startUnderWay,
} from "../reconciler/preview-admission.ts";
import {
  claimedNamespaceUid,
  preparePreviewNamespace,
  reapplyPreviewGuards,
  type Teardown,
  teardownPreviewNamespace,
} from "../reconciler/preview-namespace.ts";
import { admit, byQueue, startable } from "../reconciler/preview-queue.ts";
import { appLeaseName, Reconciler } from "../reconciler/reconciler.ts";
import { githubAppId, instanceName } from "../state/identity.ts";
import {
  destinationOf,
  type PreviewRecord,
  PreviewStore,
  previewKey,
  type StoredPreview,
} from "../state/preview-store.ts";
import { stateConfigMapName } from "../state/store.ts";
import { short } from "../util/short-sha.ts";
import { permissionOf } from "./authorize.ts";
import { GitHubSource } from "./github-source.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { previewChecks, reportPreviewCheck } from "./preview-check.ts";
import { type PreviewEvent, previewDecision } from "./preview-eligibility.ts";
import { type PullView, previewFactsOf, readPull } from "./preview-facts.ts";
import { replicaActions } from "./preview-replicas.ts";
import {
  createPreviewDeployment,
  type PreviewState,
  previewCommentBody,
  previewDeploymentStatus,
  upsertPreviewComment,
} from "./preview-report.ts";
import { PreviewSource } from "./preview-source.ts";
import { sweepAction } from "./preview-sweep.ts";
import type { GitHubReporter } from "./reporter.ts";
import { announcePreview } from "./repository-announce.ts";
import type { AppDeps, RepoInfo, RepoRuntime, Runtimes } from "./runtime.ts";

export interface PreviewManagerOptions {
  /** How often records are checked against their pull requests (ms; default 5 min; 0: never). */
  sweepMs?: number;
  /** Waits between teardown attempts while the namespace terminates (ms; default 2 s doubling to 1 min). */
  teardownRetryMs?: { initial: number; max: number };
  /** Told how many recorded previews are being torn down, each time the records are read (a metric). */
  teardownsPending?: (count: number) => void;
}

interface Running {
  reconciler: Reconciler;
  /** The head the preview may run: the Reconciler reads it here, never from GitHub. */
  source: PreviewSource;
  env: EnvironmentConfig;
  /** Writes the preview's check runs, one per head commit. */
  checks: GitHubReporter;
  /** The sha the current deployment is of. */
  deployedSha?: string;
  /** The record it was started from (what names its state and Lease). */
  record: PreviewRecord;
}

/** The serial step in which queued previews are started (no preview's key looks like it). */
const QUEUE = "(the queue)";

export class PreviewManager {
  private readonly store: PreviewStore;
  /** Each installation's admission ticket: one start decision at a time across replicas. */
  private readonly tickets: PreviewAdmissionTickets;
  private readonly running = new Map<string, Running>();
  /** A read of the records for announced previews under way, and whether another is due after it. */
  private following?: Promise<void>;
  private followAgain = false;
  /** Work on one preview runs one step at a time: events, reports and teardown never interleave. */
  private readonly chains = new Map<string, Promise<unknown>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly runtimes: Runtimes,
    private readonly deps: AppDeps,
    private readonly options: PreviewManagerOptions = {},
  ) {
    this.store = new PreviewStore(deps.client, deps.stateNamespace);
    this.tickets = new PreviewAdmissionTickets(deps.client, deps.stateNamespace);
    // Another replica started a preview: its Reconciler runs here too, at once rather than at the
    // next sweep (the starting replica may have left its Lease to this one, being at its share).
    // Another ended one: the Reconciler here stops (it would take the deleted Lease up again).
    runtimes.onPreviewAnnounced = () => this.followSoon();
  }

  /** One read of the records for any number of announcements arriving together (a start-up's). */
  private followSoon(): void {
    if (this.following) {
      this.followAgain = true;
      return;
    }
    this.following = this.store
      .list()
      .then((all) => this.follow(all))
      .catch((err) => this.deps.log.warn({ err }, "could not run the previews other replicas started"))
      .finally(() => {
        this.following = undefined;
        if (this.followAgain) {
          this.followAgain = false;
          this.followSoon();
        }
      });
  }

  /** Resumes every recorded preview and starts the sweep. */
  start(): void {
    void this.resume().catch((err) => this.deps.log.warn({ err }, "could not resume the previews"));
    const every = this.options.sweepMs ?? 300_000;
    if (every > 0) {
      this.sweepTimer = setInterval(() => void this.sweep().catch(() => undefined), every);
      this.sweepTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    await Promise.all([...this.running.values()].map((r) => r.reconciler.stop()));
    this.running.clear();
  }

  /** The previews this replica syncs now: it holds their Leases (or runs without Leases). */
  syncing(): string[] {
    return [...this.running].filter(([, r]) => r.reconciler.active.length > 0).map(([key]) => key);
  }

  /** Every preview's passes and reports have finished (tests). */
  async idle(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await Promise.all([...this.chains.values()].map((c) => c.catch(() => undefined)));
      for (const r of this.running.values())
        await Promise.all(r.reconciler.environments.map((c) => c.idle()));
    }
  }

  private serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.chains.get(key) ?? Promise.resolve();
    const next = before.catch(() => undefined).then(work);
    this.chains.set(key, next);
    void next
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  private later(key: string, work: () => Promise<void>, what = "a preview's teardown failed"): void {
    void this.serial(key, work).catch((err) => this.deps.log.warn({ err, preview: key }, what));
  }

  /** A pull_request webhook (labeled, unlabeled, opened, reopened, synchronize, closed). */
  async onPullRequest(
    rt: RepoRuntime,
    gh: Octokit,
    action: string,
    pr: PullView,
    label?: string,
    sender?: string,
  ): Promise<void> {
    const event: PreviewEvent | undefined =
      action === "labeled" || action === "unlabeled"
        ? { kind: action, label: label ?? "" }
        : action === "opened" || action === "reopened" || action === "synchronize" || action === "closed"
          ? { kind: action }
          : undefined;
    // The sender of a push is who really pushed it: they need the permission too.
    if (event) await this.handle(rt, gh, pr, event, action === "synchronize" ? sender : undefined);
  }

  /** `/preview` or `/preview stop` on a pull request. */
  async onCommand(rt: RepoRuntime, gh: Octokit, number: number, by: string, stop: boolean): Promise<void> {
    const permission = await permissionOf(gh, rt.ref, by);
    const pr = await readPull(gh, rt.ref, number);
    await this.handle(rt, gh, pr, { kind: "command", stop, by, permission });
  }

  private async handle(
    rt: RepoRuntime,
    gh: Octokit,
    pr: PullView,
    event: PreviewEvent,
    pusher?: string,
  ): Promise<void> {
    const templates = rt.config.previewEnvironments ?? [];
    if (templates.length === 0) {
      if (event.kind === "command")
        await this.reply(
          gh,
          rt.ref,
          pr.number,
          "this repository's `.github/syncward.yml` has no `previewEnvironments`.",
        );
      return;
    }
    const fullName = `${rt.info.owner}/${rt.info.repo}`;
    for (const template of templates) {
      const key = previewKey(fullName, pr.number, template.from);
      await this.serial(key, async () => {
        const stored = await this.store.get(key);
        const live = stored !== undefined && stored.record.phase !== "tearingDown";
        if (stored?.record.phase === "tearingDown") return;
        // The sweep's look at a head already held back, or already followed, decides nothing new.
        if (event.kind === "synchronize" && stored && pusher === undefined) {
          const r = stored.record;
          if (r.head.sha === pr.head.sha || r.held?.sha === pr.head.sha) return;
        }
        const facts = await previewFactsOf(gh, rt.ref, pr, live, {
          trusted: rt.info.defaultBranch,
          sender: pusher,
        });
        const decision = previewDecision(template, event, facts);
        const asked = event.kind === "command" ? event : undefined;
        switch (decision.action) {
          case "none":
            if (asked?.stop && !stored)
              await this.say(
                gh,
                rt.ref,
                pr.number,
                `@${asked.by}, this pull request has no preview to stop.`,
              );
            return;
          case "refuse":
            // A push to a refused pull request is not answered each time: the ask was.
            if (event.kind !== "synchronize") await this.reply(gh, rt.ref, pr.number, decision.reason);
            return;
          case "stop":
            // After this step, not inside it: a namespace can take minutes to go, and the
            // webhook's delivery must not wait for it.
            if (stored)
              this.later(key, () => this.teardown(gh, stored, decision.reason ?? whyStopped(event, pr)));
            return;
          case "hold":
            if (stored) await this.hold(gh, stored, pr, decision.reason);
            return;
          case "resync":
            if (!stored) return;
            if (asked)
              await this.say(
                gh,
                rt.ref,
                pr.number,
                stored.record.phase === "queued"
                  ? `@${asked.by}, this pull request's preview is already queued: it starts when a preview ends, and its comment says when.`
                  : `@${asked.by}, this pull request's preview is already running: its comment has the address, and it follows every push.`,
              );
            await this.move(rt, gh, stored, pr, template);
            return;
          case "start":
            await this.begin(rt, gh, template, pr);
        }
      });
    }
  }

  /** The preview's environment and limits, or why it may not run. */
  private placed(
    rt: RepoRuntime,
    template: PreviewTemplate,
    pr: { number: number; branch: string; sha: string },
    /** The namespace the preview's record names: a preview that started is placed there, whatever its head now. */
    namespace?: string,
  ) {
    const from = rt.config.environments.find((e) => e.name === template.from);
    if (!from) return { allowed: false as const, reason: `no environment ${template.from}` };
    const { project: _bound, ...source } = from;
    const env = previewEnvironmentOf(template, source, pr, namespace);
    return placePreview(
      this.runtimes.projectFor(rt.info.owner, rt.info.repo),
      env,
      [],
      `${rt.info.owner}/${rt.info.repo}`,
    );
  }

  private async begin(rt: RepoRuntime, gh: Octokit, template: PreviewTemplate, pr: PullView): Promise<void> {
    const head = { branch: pr.head.ref, sha: pr.head.sha };
    const placement = this.placed(rt, template, { number: pr.number, ...head });
    if (!placement.allowed) return this.reply(gh, rt.ref, pr.number, placement.reason);
    const now = new Date().toISOString();
    const record: PreviewRecord = {
      key: previewKey(`${rt.info.owner}/${rt.info.repo}`, pr.number, template.from),
      repository: { owner: rt.info.owner, repo: rt.info.repo, id: rt.info.id ?? 0 },
      installation: rt.info.installationId,
      pull: pr.number,
      from: template.from,
      namespace: placement.env.destination.namespace,
      destination: destinationOf(placement.env.destination),
      head,
      phase: "queued",
      requestedAt: now,
      lastMovedAt: now,
      attempts: 0,
    };
    await this.store.put(record);
    let admission: AdmissionOutcome;
    try {
      admission = await admitPreview(this.store, this.tickets, record.key, (all, candidate) =>
        admit(all, candidate, placement.limits),
      );
    } catch (err) {
      // No turn, no start: it stays queued and the sweep decides again.
      this.deps.log.warn({ err, preview: record.key }, "could not decide whether a preview starts now");
      await this.queuedComment(gh, rt, record.key, placement.env, {
        kind: "queued",
        position: 0,
        reason: `syncward could not check the operator's limits just now (${(err as Error).message})`,
        next: "It is tried again within a few minutes.",
      });
      return;
    }
    if (admission.kind === "left") return;
    if (admission.kind === "queued") {
      const { stored, position, reason } = admission;
      await this.queuedComment(gh, rt, stored, placement.env, { kind: "queued", position, reason });
      return;
    }
    await this.launch(rt, gh, admission.stored, placement.env, placement.limits);
  }

  /** The queued preview's comment (its id kept in the record as `stored` has it, or as read now). */
  private async queuedComment(
    gh: Octokit,
    rt: RepoRuntime,
    stored: StoredPreview | string,
    env: EnvironmentConfig,
    state: PreviewState,
  ): Promise<void> {
    const now = typeof stored === "string" ? await this.store.get(stored) : stored;
    if (now?.record.phase !== "queued") return;
    const commentId = await upsertPreviewComment(gh, rt.ref, now.record, this.body(now.record, env, state));
    await this.store.put({ ...now.record, commentId }, now.resourceVersion);
  }

  /**
   * Namespace, record, deployment and the preview's Reconciler, for a queued record as its
   * admission claimed it (`stored`: admitted, with one more launch and its claim token, written as
   * it was read, so of two starts at once only one gets here). Runs in the preview's serial step.
   * The namespace it makes carries the token, so a start cut short after the create is taken up
   * by the next one. A start that fails before the preview is live gives its place back.
   */
  private async launch(
    rt: RepoRuntime,
    gh: Octokit,
    stored: StoredPreview,
    env: EnvironmentConfig,
    limits: ProjectPreviews,
  ): Promise<void> {
    const giveBack = () =>
      releaseClaim(this.store, stored).catch((err) =>
        this.deps.log.warn({ err, preview: stored.record.key }, "could not give back a preview's place"),
      );
    let record: PreviewRecord = stored.record;
    const claimed = stored.resourceVersion;
    const ready = await preparePreviewNamespace(this.clientOf(env), record.namespace, record.key, limits, {
      recordedUid: record.namespaceUid,
      claim: record.claim,
    }).catch(async (err: Error) => {
      await giveBack();
      throw err;
    });
    if (!ready.ok) {
      // Queued still, its place given back: the next start (a teardown's, the sweep's) tries again.
      if (ready.later) return giveBack();
      // Only a record that owns no namespace, and only as written just now: never a record another
      // replica has made live since.
      if (!record.namespaceUid && (await this.store.delete(record.key, claimed)))
        await this.reply(gh, rt.ref, record.pull, ready.reason);
      else await giveBack();
      return;
    }
    // The namespace is the preview's from now on: its uid is recorded before anything else (GitHub
    // above all), so a failure or a crash after this still leaves a record that a teardown, a
    // resume or another replica finds; a namespace nothing recorded would be left for good.
    const { admitted: _place, ...started } = record;
    record = {
      ...started,
      phase: "live",
      destination: destinationOf(env.destination),
      namespaceUid: ready.uid,
    };
    let version: string;
    try {
      version = (await this.store.put(record, claimed)).resourceVersion;
    } catch (err) {
      // Not recorded: the namespace made just now goes again (by its uid), or it would be no one's.
      if (ready.created)
        await teardownPreviewNamespace(this.clientOf(env), record.namespace, ready.uid).catch(
          () => undefined,
        );
      await giveBack();
      throw err;
    }
    // What GitHub shows of the start. Should it fail, the preview runs all the same: its first
    // sync's report creates the deployment and the comment.
    try {
      const deploymentId = await createPreviewDeployment(gh, rt.ref, env.name, record.head.sha);
      record = { ...record, deploymentId, deployedSha: record.head.sha };
      await previewDeploymentStatus(
        gh,
        rt.ref,
        deploymentId,
        "in_progress",
        `deploying ${short(record.head.sha)}`,
        env.environmentUrl,
      );
      record.commentId = await upsertPreviewComment(
        gh,
        rt.ref,
        record,
        this.body(record, env, { kind: "deploying" }),
      );
    } catch (err) {
      this.deps.log.warn({ err, preview: record.key }, "could not show a preview's start on GitHub");
    }
    await this.store
      .put(record, version)
      .catch((err) =>
        this.deps.log.warn({ err, preview: record.key }, "could not record a preview's deployment"),
      );
    // The other replicas run it too (the shard may give it to one of them): they hear of it from
    // its Lease, marked now that its deployment is recorded (a replica that took it earlier would
    // make a deployment of its own); failing that, from the records at their next sweep.
    if (this.deps.shard)
      await announcePreview(this.deps.client, this.deps.stateNamespace, previewAppId(record), {
        key: record.key,
        start: record.launches ?? 1,
      }).catch((err) =>
        this.deps.log.warn(
          { err, preview: record.key },
          "could not announce a preview to the other replicas",
        ),
      );
    this.run(rt, record, env);
  }

  private run(rt: RepoRuntime, record: PreviewRecord, env: EnvironmentConfig): void {
    const info = rt.info;
    const octokit = () => this.deps.auth(info.installationId);
    const source = new PreviewSource(
      new GitHubSource(rt.ref, octokit, this.deps.cacheDir),
      record.head.branch,
      record.head.sha,
      async () => (await this.store.get(record.key))?.record.head.sha,
    );
    const reconciler = new Reconciler({
      app: previewAppId(record),
      repository: `${info.owner}/${info.repo}`,
      config: { environments: [env] },
      client: this.deps.client,
      clusters: this.deps.clusters,
      source,
      emit: (e) =>
        void this.serial(record.key, () => this.report(record.key, e)).catch((err) =>
          this.deps.log.warn({ err, preview: record.key }, "could not report a preview's sync to GitHub"),
        ),
      log: this.deps.log,
      stateNamespace: this.deps.stateNamespace,
      identity: this.deps.identity,
      // Like a repository's: the replica holding the preview's Lease syncs it and reports; the
      // others stand by, hand pushes over, and take it up when the holder goes.
      leases: this.deps.leases,
      shard: this.deps.shard,
      watch: this.deps.watch,
      // No polling: a preview follows its pull request through its pushes (webhooks, the sweep),
      // and its source answers the head it was given without asking GitHub.
      pollIntervalMs: 0,
    });
    const checks = previewChecks({
      repo: rt.ref,
      htmlUrl: info.htmlUrl,
      octokit,
      reconciler,
      log: this.deps.log,
    });
    // The commit of the recorded deployment: a head recorded by a push but not yet synced is not it.
    const deployedSha =
      record.deployedSha ?? (record.deploymentId === undefined ? undefined : record.head.sha);
    this.running.set(record.key, { reconciler, source, env, checks, deployedSha, record });
    reconciler.start();
  }

  /** A sync of a preview, as its deployment and comment show it. */
  private async report(key: string, e: ReconcilerEvent): Promise<void> {
    const running = this.running.get(key);
    const stored = await this.store.get(key);
    if (!running || !stored || stored.record.phase !== "live") return;
    const gh = await this.deps.auth(stored.record.installation);
    // The check run is the sync's report; a failure there leaves the deployment and comment to go on.
    await reportPreviewCheck(running.checks, gh, e).catch((err) =>
      this.deps.log.warn({ err, preview: key }, "could not write a preview's check run"),
    );
    const state: PreviewState | undefined =
      e.type === "synced" || e.type === "selfHealed"
        ? e.outcome.phase === "Succeeded"
          ? { kind: "live", message: e.outcome.message }
          : { kind: "failed", message: e.outcome.message }
        : e.type === "unchanged"
          ? { kind: "live", message: "nothing to change" }
          : e.type === "renderError" || e.type === "clusterUnavailable"
            ? { kind: "failed", message: e.message }
            : e.type === "syncStarted"
              ? { kind: "deploying" }
              : undefined;
    if (!state) return;
    const repo = refOf(stored.record);
    let record = stored.record;
    const url = running.env.environmentUrl;
    // Each head gets a deployment of its own, in progress from its sync's start (or from its first
    // word, for a head that fails before any sync starts), then successful or failed.
    if (record.deploymentId === undefined || running.deployedSha !== e.revision) {
      const id = await createPreviewDeployment(gh, repo, running.env.name, e.revision);
      running.deployedSha = e.revision;
      record = {
        ...record,
        deploymentId: id,
        deployedSha: e.revision,
        head: { ...record.head, sha: e.revision },
      };
      await previewDeploymentStatus(gh, repo, id, "in_progress", `deploying ${short(e.revision)}`, url);
    } else if (state.kind === "deploying") return; // a head's later syncs (self-heals) show on its check run
    if (state.kind === "deploying") {
      record.commentId = await upsertPreviewComment(gh, repo, record, this.body(record, running.env, state));
      await this.store.put(record, stored.resourceVersion);
      return;
    }
    await previewDeploymentStatus(
      gh,
      repo,
      record.deploymentId as number,
      state.kind === "live" ? "success" : "failure",
      state.message,
      url,
    );
    record = {
      ...record,
      head: { ...record.head, sha: e.revision },
      attempts: state.kind === "live" ? 0 : record.attempts + 1,
      ...(state.kind === "failed" ? { lastError: state.message } : { lastError: undefined }),
    };
    record.commentId = await upsertPreviewComment(gh, repo, record, this.body(record, running.env, state));
    await this.store.put(record, stored.resourceVersion);
  }

  /** A push to the pull request (or one the sweep found) that qualifies: the preview follows its head. */
  private async move(
    rt: RepoRuntime,
    gh: Octokit,
    stored: StoredPreview,
    pr: PullView,
    template: PreviewTemplate,
  ): Promise<void> {
    const { held, ...was } = stored.record;
    const record: PreviewRecord = {
      ...was,
      head: { branch: pr.head.ref, sha: pr.head.sha },
      lastMovedAt: new Date().toISOString(),
    };
    const written = await this.store.put(record, stored.resourceVersion);
    if (record.phase !== "live") return;
    // The operator's quota and limits, again: one deleted or edited since comes back with the push.
    await this.guard(rt, template, record);
    // A live preview another replica started, not met here yet: its Reconciler starts here now,
    // so the push reaches whichever replica holds its Lease instead of waiting for the sweep.
    if (!this.running.has(record.key) && this.deps.leases) await this.resumeLive(gh, written);
    const running = this.running.get(record.key);
    if (!running) return;
    // The preview's source answers the head it is given: this one was checked just now.
    running.source.learnHead(pr.head.ref, pr.head.sha);
    // The revision goes with a push handed to the replica holding the preview's Lease.
    running.reconciler.nudgeBranch(pr.head.ref, "push", pr.author, undefined, { revision: pr.head.sha });
  }

  /**
   * A push the preview must not follow (someone without the template's permission pushed): it
   * stays at the head it runs, and its comment says why until a head that qualifies comes.
   */
  private async hold(gh: Octokit, stored: StoredPreview, pr: PullView, reason: string): Promise<void> {
    if (stored.record.held?.sha === pr.head.sha) return;
    let record: PreviewRecord = { ...stored.record, held: { sha: pr.head.sha, reason } };
    let version = (await this.store.put(record, stored.resourceVersion)).resourceVersion;
    const envName = previewName(record.pull, record.from);
    const running = this.running.get(record.key);
    const state: PreviewState =
      record.phase === "queued"
        ? { kind: "queued", position: 0, reason: "it waits for a preview to end" }
        : record.lastError
          ? { kind: "failed", message: record.lastError }
          : { kind: "live", message: "running the last head it was allowed to follow" };
    record = {
      ...record,
      commentId: await upsertPreviewComment(
        gh,
        refOf(record),
        record,
        previewCommentBody(record, envName, state, running?.env.environmentUrl),
      ),
    };
    version = (await this.store.put(record, version)).resourceVersion;
  }

  /** The operator's quota and limits applied again in a live preview's namespace (when still its own). */
  private async guard(rt: RepoRuntime, template: PreviewTemplate, record: PreviewRecord): Promise<void> {
    const placement = this.placed(rt, template, { number: record.pull, ...record.head }, record.namespace);
    if (!placement.allowed || !record.namespaceUid) return;
    await reapplyPreviewGuards(
      this.clientOf(placement.env),
      record.namespace,
      record.namespaceUid,
      placement.limits,
    ).catch((err) =>
      this.deps.log.warn({ err, preview: record.key }, "could not apply a preview's quota and limits again"),
    );
  }

  /** Stops the preview and deletes its namespace, retrying until it is gone; then starts waiters. */
  private async teardown(
    gh: Octokit | undefined,
    stored: StoredPreview,
    reason: string,
    quiet = false,
  ): Promise<void> {
    // A teardown resumed after a restart keeps the reason it began with: that is what happened.
    const why = stored.record.stopping ?? reason;
    const repositoryGone = quiet || stored.record.repositoryGone === true;
    const resumed = stored.record.phase === "tearingDown";
    let record = {
      ...stored.record,
      phase: "tearingDown" as const,
      stopping: why,
      // A teardown that begins counts its attempts from here (a live preview's are its syncs').
      ...(resumed ? {} : { attempts: 0, lastError: undefined }),
      ...(repositoryGone ? { repositoryGone } : {}),
    };
    let version = (await this.store.put(record, stored.resourceVersion)).resourceVersion;
    const running = this.running.get(record.key);
    this.running.delete(record.key);
    await running?.reconciler.stop();
    const repo = refOf(record);
    const envName = previewName(record.pull, record.from);
    const say = async (state: PreviewState) => {
      if (repositoryGone || !gh) return;
      record = {
        ...record,
        commentId: await upsertPreviewComment(gh, repo, record, previewCommentBody(record, envName, state)),
      };
      version = (await this.store.put(record, version)).resourceVersion;
    };
    // A namespace made by a start cut short before its uid was recorded carries the record's claim.
    const claim = record.claim;
    if (record.namespaceUid || claim) {
      const destination = record.destination ?? (running && destinationOf(running.env.destination));
      let wait = this.options.teardownRetryMs?.initial ?? 2_000;
      // What the comment says the teardown waits for. Said at the first wait (a resumed teardown
      // says it again), and again whenever it changes: the namespace's conditions, which name the
      // finalizers and the kinds of objects that hold it, come a moment after its deletion.
      let said: string | undefined;
      for (;;) {
        if (this.stopped) return; // the next start resumes it from the record
        // Resolved at each attempt: a destination cluster the registry lost may come back.
        const result = await Promise.resolve()
          .then(() => this.teardownClient(record, destination))
          .then(async (client): Promise<Teardown> => {
            const uid =
              record.namespaceUid ??
              (claim === undefined ? undefined : await claimedNamespaceUid(client, record.namespace, claim));
            return uid ? teardownPreviewNamespace(client, record.namespace, uid) : { done: true };
          })
          .catch((err: Error) => ({ done: false as const, waiting: `the API server (${err.message})` }));
        if (result.done) break;
        // Kept in the record, so a restart (or the sweep of another replica) knows how long it has
        // waited and for what.
        record = { ...record, attempts: record.attempts + 1, lastError: result.waiting };
        if (result.waiting !== said) await say({ kind: "tearingDown", waiting: result.waiting });
        else version = (await this.store.put(record, version)).resourceVersion;
        said = result.waiting;
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, this.options.teardownRetryMs?.max ?? 60_000);
      }
    }
    if (record.deploymentId !== undefined && !repositoryGone && gh)
      await previewDeploymentStatus(gh, repo, record.deploymentId, "inactive", `torn down: ${why}`);
    await say({ kind: "gone", why });
    // Last, once the namespace is gone: what the preview's Reconciler kept in the state namespace
    // (its state and Lease), then the record itself, so a teardown cut short is taken up again.
    await this.forget(record);
    await this.store.delete(record.key);
    this.startQueuedLater();
  }

  /**
   * startQueued in a step of its own, after the current one: a step never waits for another
   * preview's step (two such waits could wait for each other).
   */
  private startQueuedLater(): void {
    this.later(QUEUE, () => this.startQueued(), "could not start the queued previews");
  }

  /**
   * The preview Reconciler's state ConfigMap and Lease in the state namespace, deleted (gone
   * already: fine). Never in the way of the teardown: one that cannot be deleted (RBAC without the
   * previews component's grant) is logged and left.
   */
  private async forget(record: PreviewRecord): Promise<void> {
    await this.forgetRuns(record).catch((err) =>
      this.deps.log.warn(
        { err, preview: record.key },
        "could not delete a torn-down preview's state and Lease in syncward's namespace",
      ),
    );
  }

  private async forgetRuns(record: PreviewRecord): Promise<void> {
    const app = previewAppId(record);
    const namespace = this.deps.stateNamespace;
    const envName = previewName(record.pull, record.from);
    await this.deps.client.delete(
      {
        apiVersion: "v1",
        group: "",
        kind: "ConfigMap",
        name: stateConfigMapName(instanceName(app, envName)),
        namespace,
      },
      "background",
    );
    await this.deps.client.delete(
      {
        apiVersion: "coordination.k8s.io/v1",
        group: "coordination.k8s.io",
        kind: "Lease",
        name: appLeaseName(app),
        namespace,
      },
      "background",
    );
  }

  /**
   * The queued previews the limits now allow, started in queue order (after a teardown, and at
   * each sweep). Each start runs in its preview's serial step and is decided there in its
   * installation's turn (preview-admission.ts): a preview another start made live meanwhile, or
   * is starting, is left alone.
   */
  async startQueued(): Promise<void> {
    const waiting = (await this.store.list()).filter((s) => s.record.phase === "queued");
    for (const { record } of waiting.sort((a, b) => byQueue(queuedOf(a.record), queuedOf(b.record)))) {
      await this.serial(record.key, async () => {
        const now = await this.store.get(record.key);
        if (now?.record.phase !== "queued") return;
        // A place a start claimed and whose replica died goes back even when this one cannot
        // start it now, or it would count against the limits for good.
        const letGo = async () => {
          if (now.record.admitted && !startUnderWay(now.record, Date.now()))
            await releaseClaim(this.store, now);
        };
        const rt = await this.runtimeOf(now.record).catch(() => undefined);
        const template = rt?.config.previewEnvironments?.find((t) => t.from === now.record.from);
        if (!rt || !template) return letGo();
        const placement = this.placed(
          rt,
          template,
          { number: now.record.pull, ...now.record.head },
          now.record.namespace,
        );
        if (!placement.allowed) return letGo();
        const gh = await this.deps.auth(now.record.installation);
        const admission = await admitPreview(this.store, this.tickets, now.record.key, (all, candidate) =>
          startable(all, placement.limits).some((q) => q.key === candidate.key)
            ? { start: true }
            : { start: false, position: 0, reason: "the limits leave it no place yet" },
        );
        if (admission.kind !== "start") return;
        await this.launch(rt, gh, admission.stored, placement.env, placement.limits);
      }).catch((err) =>
        // It stays queued: the next teardown or sweep tries again. The others go on.
        this.deps.log.warn({ err, preview: record.key }, "could not start a queued preview"),
      );
    }
  }

  /** After a restart: live previews run again, half torn down ones are finished. */
  async resume(): Promise<void> {
    for (const stored of await this.store.list()) {
      const key = stored.record.key;
      await this.serial(key, async () => {
        const gh = await this.deps.auth(stored.record.installation).catch((err: Error) => {
          if (stored.record.repositoryGone) return undefined;
          throw err;
        });
        if (stored.record.phase === "tearingDown")
          return this.teardown(gh, stored, "resumed after a restart");
        if (!gh) return;
        if (stored.record.phase !== "live" || this.running.has(key)) return;
        await this.resumeLive(gh, stored);
      });
    }
  }

  /** A live preview's Reconciler runs here again, if its template and the limits still allow it. */
  private async resumeLive(gh: Octokit, stored: StoredPreview, adopting = false): Promise<void> {
    const rt = await this.runtimeOf(stored.record);
    const template = rt?.config.previewEnvironments?.find((t) => t.from === stored.record.from);
    // Where it started: a template whose namespace names the head ({sha7}) must not move it.
    const placement =
      rt &&
      template &&
      this.placed(
        rt,
        template,
        { number: stored.record.pull, ...stored.record.head },
        stored.record.namespace,
      );
    if (!rt || !template || !placement?.allowed) {
      // Another replica started it just now: this one's config may not have caught up with the
      // push that added the template, so what it reads is no reason to end it. The sweep decides.
      if (adopting) return;
      return this.teardown(gh, stored, "its template or the operator's limits no longer allow it");
    }
    await this.guard(rt, template, stored.record);
    this.run(rt, stored.record, placement.env);
  }

  /**
   * Another replica started a preview, or ended one: a Reconciler for it starts here (standing by
   * unless its Lease comes here), or the one here stops, without a word on GitHub.
   */
  private follow(all: StoredPreview[]): void {
    const { adopt, drop } = replicaActions({
      records: all.map((s) => s.record),
      running: [...this.running.keys()],
      busy: (key) => this.chains.has(key),
    });
    for (const key of adopt)
      this.later(
        key,
        async () => {
          const now = await this.store.get(key);
          if (!now) return;
          if (now.record.phase !== "live" || this.running.has(key)) return;
          await this.resumeLive(await this.deps.auth(now.record.installation), now, true);
        },
        "could not run a preview another replica started",
      );
    for (const key of drop)
      this.later(
        key,
        async () => {
          const now = await this.store.get(key);
          const running = this.running.get(key);
          if (now?.record.phase === "live" || !running) return;
          this.running.delete(key);
          await running.reconciler.stop();
          // Its Reconciler here may have written them again after the teardown deleted them.
          if (!now) await this.forget(running.record);
        },
        "could not stop a preview another replica ended",
      );
  }

  /**
   * Records whose pull request closed without a webhook reaching syncward, whose template left the
   * config, or whose TTL passed; and teardowns that stopped half way (a GitHub or API server
   * failure), taken up again so none is forgotten until a restart. A pull request whose head moved
   * without a push webhook reaching syncward is handled as that push (its pushers checked).
   */
  async sweep(): Promise<string[]> {
    const removed: string[] = [];
    const all = await this.store.list();
    this.options.teardownsPending?.(all.filter((s) => s.record.phase === "tearingDown").length);
    this.follow(all);
    for (const stored of all) {
      const { record } = stored;
      // An installation GitHub no longer authenticates leaves this record to the next sweep, never
      // the others: one deleted installation must not stop every repository's sweep.
      const gh = await this.deps.auth(record.installation).catch(() => undefined);
      if (!gh && !record.repositoryGone) continue;
      const busy = this.chains.has(record.key);
      const open = record.phase !== "tearingDown";
      const pr =
        open && gh ? await readPull(gh, refOf(record), record.pull).catch(() => undefined) : undefined;
      let rt = open ? await this.runtimeOf(record).catch(() => undefined) : undefined;
      let template = rt?.config.previewEnvironments?.find((t) => t.from === record.from);
      if (rt && !template && record.phase === "live") {
        // A template missing here may be one a push added that this replica has not read yet
        // (another replica started the preview): the config is read again before it ends one.
        rt = await this.runtimes.for(rt.info, true).catch(() => undefined);
        template = rt?.config.previewEnvironments?.find((t) => t.from === record.from);
      }
      const decision = sweepAction({
        phase: record.phase,
        pullState: pr === undefined ? undefined : pr.state === "open" ? "open" : "closed",
        templateExists: rt === undefined ? undefined : template !== undefined,
        ttlMs: template?.ttl,
        lastMovedAt: record.lastMovedAt,
        busy,
      });
      if (decision.action === "keep") {
        // A head no webhook brought: the preview follows it as it would the push (or holds).
        if (
          rt &&
          pr?.state === "open" &&
          !busy &&
          pr.head.sha !== record.head.sha &&
          pr.head.sha !== record.held?.sha
        )
          void this.handle(rt, gh as Octokit, pr, { kind: "synchronize" }).catch((err) =>
            this.deps.log.warn({ err, preview: record.key }, "could not follow a pull request's head"),
          );
        continue;
      }
      const why = decision.action === "teardown" ? decision.why : "its teardown is taken up again";
      this.later(record.key, async () => {
        const now = await this.store.get(record.key);
        if (!now) return;
        if (decision.action === "teardown" && now.record.phase === "tearingDown") return;
        await this.teardown(gh, now, why);
      });
      removed.push(record.key);
    }
    // A start that failed (or was cut short), or room another replica's teardown made: the queued
    // previews the limits allow start now.
    if (all.some((s) => s.record.phase === "queued")) this.startQueuedLater();
    return removed;
  }

  /**
   * The repository left the installation, was deleted or archived, or the installation went: its
   * previews are torn down on their clusters without a word on GitHub, which would refuse it.
   */
  async repositoryGone(match: { owner: string; repo: string } | { installation: number }): Promise<string[]> {
    const gone = (r: PreviewRecord) =>
      "installation" in match
        ? r.installation === match.installation
        : r.repository.owner.toLowerCase() === match.owner.toLowerCase() &&
          r.repository.repo.toLowerCase() === match.repo.toLowerCase();
    const ended: string[] = [];
    // The repository's own stop must not wait on, or fail with, the state namespace's API server.
    const all = await this.store.list().catch((err: Error) => {
      this.deps.log.warn(
        { err, ...match },
        "the previews of a repository syncward no longer serves could not be listed: any still running stay until their namespaces are deleted by hand",
      );
      return [];
    });
    for (const stored of all) {
      if (!gone(stored.record)) continue;
      const gh = await this.deps.auth(stored.record.installation).catch(() => undefined);
      this.later(stored.record.key, async () => {
        const now = await this.store.get(stored.record.key);
        if (now) await this.teardown(gh, now, "the repository left syncward's installation", true);
      });
      ended.push(stored.record.key);
    }
    return ended;
  }

  private async runtimeOf(record: PreviewRecord): Promise<RepoRuntime | undefined> {
    const running = this.runtimes.running(record.repository.owner, record.repository.repo);
    if (running) return running;
    const gh = await this.deps.auth(record.installation);
    const { data } = await gh.rest.repos.get({
      owner: record.repository.owner,
      repo: record.repository.repo,
    });
    const info: RepoInfo = {
      id: data.id,
      owner: record.repository.owner,
      repo: record.repository.repo,
      installationId: record.installation,
      htmlUrl: data.html_url,
      defaultBranch: data.default_branch,
    };
    return this.runtimes.for(info);
  }

  /**
   * The client of the cluster a preview's namespace is on: the destination its record names. A
   * record from before destinations were kept names none; its template's placement now is the
   * best guess, and syncward's own cluster the last.
   */
  private async teardownClient(record: PreviewRecord, destination?: Destination): Promise<KubeClient> {
    if (destination) return this.deps.clusters?.clientFor(destination) ?? this.deps.client;
    const rt = await this.runtimeOf(record).catch(() => undefined);
    const template = rt?.config.previewEnvironments?.find((t) => t.from === record.from);
    const placement = rt && template && this.placed(rt, template, { number: record.pull, ...record.head });
    return placement?.allowed ? this.clientOf(placement.env) : this.deps.client;
  }

  private clientOf(env: EnvironmentConfig): KubeClient {
    return this.deps.clusters?.clientFor(env.destination) ?? this.deps.client;
  }

  private body(record: PreviewRecord, env: EnvironmentConfig, state: PreviewState): string {
    return previewCommentBody(record, env.name, state, env.environmentUrl);
  }

  /** A polite answer to someone whose preview cannot be. */
  private async reply(gh: Octokit, repo: RepoRef, number: number, reason: string): Promise<void> {
    await this.say(gh, repo, number, `No live preview for this pull request: ${reason}.`);
  }

  private async say(gh: Octokit, repo: RepoRef, number: number, body: string): Promise<void> {
    await gh.rest.issues.createComment({ ...repo, issue_number: number, body });
  }
}

/** The preview's app identity: the repository's plus the preview's name, apart from its environments. */
function previewAppId(record: PreviewRecord): string {
  return `${githubAppId(record.repository.id)}-${previewName(record.pull, record.from)}`;
}

/** The repository as GitHub's API names it (its id is the record's, never a parameter). */
function refOf(record: PreviewRecord): RepoRef {
  return { owner: record.repository.owner, repo: record.repository.repo };
}

function whyStopped(event: PreviewEvent, pr: PullView): string {
  if (event.kind === "closed") return pr.merged ? "the pull request was merged" : "the pull request closed";
  if (event.kind === "command") return `@${event.by} asked with /preview stop`;
  if (event.kind === "unlabeled") return `the ${event.label} label was removed`;
  return "it no longer qualifies";
}
