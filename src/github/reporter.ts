// Reconciler events become GitHub objects: a check run per environment per commit (`syncward /
// <env>`), a deployment with statuses for each sync that changes an environment, and one PR
// comment per merged pull request that sums up every environment, edited in place.
// Calls for one environment are serialized so statuses arrive in order; when GitHub is down or
// limiting us, reports wait in a bounded queue and catch up once it answers (report-queue.ts).
// A deployment is made once per (environment, commit), also across restarts: an existing one
// that syncward made is found on GitHub and reused.
import type { EnvironmentConfig } from "../config/types.ts";
import { environmentDiff } from "../engine/environment-diff.ts";
import type { SyncResult } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import { isTransient as isTransientKubeError } from "../kube/errors.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { DriftFight, ReconcilerEvent } from "../reconciler/events.ts";
import { effectivePolicy } from "../reconciler/policy.ts";
import type { Reconciler } from "../reconciler/reconciler.ts";
import type { PinRecord } from "../state/types.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import { approverMentions } from "./authorize.ts";
import { fitMarkdown } from "./budget.ts";
import { clusterUnavailableCheck, renderFailedCheck } from "./check-notes.ts";
import { contributorsOf, unclaimedAddresses } from "./contributors.ts";
import { oneLine } from "./format.ts";
import { causes, gitHubWaitMs, isTransientGitHubError, statusOf } from "./github-errors.ts";
import { codeSpan, fenced, inertInline } from "./markdown.ts";
import type { Octokit, OctokitFactory, RepoRef } from "./octokit.ts";
import { fetchRange } from "./range.ts";
import { ReportQueue } from "./report-queue.ts";
import {
  type ApprovalWait,
  annotationsFor,
  CHECK_OUTPUT_MAX_BYTES,
  checkRunOutput,
  conclusionFor,
  type DriftFightAlert,
  deploymentDescription,
  type PrCommentRow,
  type PreviewInfo,
  prCommentBody,
} from "./summary.ts";
import { byteLength, prefixByBytes } from "./truncate.ts";

export const CHECK_PREFIX = "syncward / ";
/** Previews carry a name of their own: they never deploy, so they never share a deploy check's name or buttons. */
export const PREVIEW_PREFIX = "syncward preview / ";
/** The events that become something on GitHub. */
const REPORTED = new Set<ReconcilerEvent["type"]>([
  "syncStarted",
  "syncProgress",
  "awaitingApproval",
  "synced",
  "refused",
  "selfHealed",
  "driftFight",
  "outOfSync",
  "renderError",
  "clusterUnavailable",
  "orphans",
  "waiting",
  "autoRollback",
]);
const DEPLOYING = new Set<ReconcilerEvent["type"]>(["syncStarted", "awaitingApproval", "synced", "refused"]);
const COMMENT_MARKER = "syncward:summary";
/** Wave updates of a live check run: at most one per this many ms (GitHub's secondary limits). */
const PROGRESS_EVERY_MS = 3_000;

export interface ReporterOptions {
  repo: RepoRef;
  /** The repository's web URL from webhook payloads (no hard-coded host). */
  htmlUrl: string;
  octokit: OctokitFactory;
  reconciler: Reconciler;
  log: Logger;
  /** Least time between two wave updates of a live check run (ms; default 3 s). */
  progressEveryMs?: number;
  /** First and longest wait before sending again after GitHub failed (ms; default 5 s to 5 min). */
  retryMs?: { initial: number; max: number };
  /**
   * Sync and Freeze buttons on the check runs (default true). A pull request's preview environment
   * has none: its life follows the pull request, and a click would name no environment of the config.
   */
  buttons?: boolean;
}

/** What is remembered per commit, environment or pull request: enough for the commits in flight. */
const REMEMBERED = 500;

interface DeploymentRecord {
  id: number;
  status: "queued" | "in_progress" | "done";
}

type CheckState = Parameters<Octokit["rest"]["checks"]["create"]>[0];

export function checkName(env: string): string {
  return `${CHECK_PREFIX}${env}`;
}

export function envFromCheckName(name: string): string | undefined {
  return name.startsWith(CHECK_PREFIX) ? name.slice(CHECK_PREFIX.length) : undefined;
}

export function previewCheckName(env: string): string {
  return `${PREVIEW_PREFIX}${env}`;
}

export function envFromPreviewCheckName(name: string): string | undefined {
  return name.startsWith(PREVIEW_PREFIX) ? name.slice(PREVIEW_PREFIX.length) : undefined;
}

/** The three buttons GitHub allows, clicks authorized like comments (Approve exactly like `/approve`). */
export function checkActions(
  frozen: boolean,
  awaitingApproval = false,
): Array<{ label: string; description: string; identifier: string }> {
  return [
    { label: "Sync", description: "Sync this environment now", identifier: "sync" },
    frozen
      ? { label: "Unfreeze", description: "Resume automated sync and self-heal", identifier: "unfreeze" }
      : { label: "Freeze", description: "Stop automated sync and self-heal", identifier: "freeze" },
    ...(awaitingApproval
      ? [{ label: "Approve", description: "Approve deploying this commit", identifier: "approve" }]
      : []),
  ];
}

export class GitHubReporter {
  private readonly queue: ReportQueue<ReconcilerEvent>;
  private readonly deployments = new BoundedMap<string, DeploymentRecord>(REMEMBERED);
  /** (env, sha) whose sync started: its deployment is owed even if the start was never reported. */
  private readonly owed = new BoundedMap<string, true>(REMEMBERED);
  /** Environments whose earlier deployments were looked up on GitHub since the start. */
  private readonly lookedUp = new Set<string>();
  /** (env, sha) whose deployment was asked for: a retry looks it up instead of making a second. */
  private readonly attempted = new BoundedMap<string, true>(REMEMBERED);
  private readonly pulls = new BoundedMap<string, number>(REMEMBERED);
  /** When each (env, sha)'s live check run was last told of a wave. */
  private readonly progressAt = new BoundedMap<string, number>(REMEMBERED);
  /** Deploy check runs by (env, sha): a later report of the same commit updates the run, never duplicates it. */
  private readonly checkRuns = new BoundedMap<string, number>(REMEMBERED);
  /** Per environment: the deployment waiting for approval, made inactive when a newer commit supersedes it. */
  private readonly waiting = new Map<string, { sha: string; id: number }>();
  /** Per production environment: the deployment last reported successful, made inactive by the next. */
  private readonly active = new Map<string, number>();
  private readonly comments = new BoundedMap<
    number,
    {
      id?: number;
      rows: Map<string, PrCommentRow>;
    }
  >(REMEMBERED);

  constructor(private readonly o: ReporterOptions) {
    this.queue = new ReportQueue({
      send: (event) => this.report(event),
      laneOf: (event) => event.instance,
      // A waiting report is replaced by a newer one of the same commit, except that the reports
      // that move a deployment along never give way to those that only add a check run.
      keyOf: (event) => `${event.env}@${event.revision}${DEPLOYING.has(event.type) ? " deployment" : ""}`,
      transient: isTransientReportError,
      waitMs: gitHubWaitMs,
      retryMs: o.retryMs,
      onDropped: (event, why, err) =>
        this.o.log.error(
          { err, event: event.type, env: event.env },
          `a report for GitHub was dropped: ${err === undefined ? why : failureOf(err)}`,
        ),
    });
  }

  /** A merged pull request produced `sha`: its environments' outcomes go to one comment there. */
  linkPullRequest(sha: string, pr: number): void {
    this.pulls.set(sha, pr);
  }

  handle(event: ReconcilerEvent): void {
    if (!REPORTED.has(event.type)) return;
    // A wave boundary updates the live check run at most every few seconds, counted from the
    // run's creation: a sync that ends within them costs no update at all.
    const key = this.deploymentKey(event.env, event.revision);
    if (event.type === "syncStarted") this.progressAt.set(key, Date.now());
    if (event.type === "syncProgress") {
      const last = this.progressAt.get(key) ?? 0;
      if (Date.now() - last < (this.o.progressEveryMs ?? PROGRESS_EVERY_MS)) return;
      this.progressAt.set(key, Date.now());
    }
    if (event.type === "syncStarted" || event.type === "awaitingApproval")
      this.owed.set(this.deploymentKey(event.env, event.revision), true);
    this.queue.push(event);
  }

  /**
   * Resolves once every report queued so far has been sent, or waits for GitHub to answer again
   * (for tests and shutdown; `backlog` tells which).
   */
  async idle(): Promise<void> {
    await this.queue.idle();
  }

  /** Reports not yet on GitHub (kept while GitHub is down). */
  get backlog(): number {
    return this.queue.waiting;
  }

  /** Stops reporting (shutdown); unsent reports are dropped. */
  close(): void {
    this.queue.close();
  }

  private env(name: string): EnvironmentConfig {
    return this.o.reconciler.controller(name).env;
  }

  private deploymentKey(env: string, sha: string): string {
    return `${env}@${sha}`;
  }

  private async report(event: ReconcilerEvent): Promise<void> {
    const gh = await this.o.octokit();
    switch (event.type) {
      case "syncStarted": {
        await this.supersede(gh, event.env, event.revision);
        const description = `syncing ${event.changes} change(s)`;
        await this.deploymentProgress(gh, event.env, event.revision, "in_progress", description);
        await this.checkStarted(gh, event.env, event.revision, description, event.planned ?? []);
        return;
      }
      case "syncProgress": {
        const id = this.checkRuns.get(this.deploymentKey(event.env, event.revision));
        if (id === undefined) return;
        await gh.rest.checks.update({
          ...this.o.repo,
          check_run_id: id,
          output: {
            title: `Syncing: wave ${event.wave} (${event.objects} object(s))`,
            summary: `syncward is syncing **${event.env}** to \`${event.revision.slice(0, 7)}\`: wave ${event.wave} (${event.objects} object(s)) is being applied; this run completes with the result.`,
          },
        });
        return;
      }
      case "awaitingApproval": {
        await this.supersede(gh, event.env, event.revision);
        const description = `waiting for approval (${event.approvals.length}/${event.needed})`;
        await this.deploymentProgress(gh, event.env, event.revision, "queued", description);
        const record = this.deployments.get(this.deploymentKey(event.env, event.revision));
        if (record) this.waiting.set(event.env, { sha: event.revision, id: record.id });
        const { wait, diff } = await this.approvalWait(gh, event.env, event.revision);
        wait.gate = {
          approvers: event.approvals,
          needed: event.needed,
          ...(event.reason ? { reason: event.reason } : {}),
        };
        const url = await this.check(gh, event.env, event.revision, { awaitingApproval: wait, diff });
        const pr = this.pulls.get(event.revision);
        if (pr !== undefined) {
          const rule = this.env(event.env).approval;
          // Nobody who contributed or already approved is pinged: the count is the gate's, as on the check run.
          const quiet = new Set(
            [...(wait.excluded ?? []), ...event.approvals].map((l) => `@${l.toLowerCase()}`),
          );
          const missing = Math.max(0, event.needed - event.approvals.length);
          await this.updateComment(
            gh,
            pr,
            event.env,
            event.revision,
            "waiting for approval",
            `comment /approve ${event.env} to deploy (${event.approvals.length} of ${event.needed} approvals; ${missing} more needed)`,
            url,
            rule ? approverMentions(this.o.repo.owner, rule).filter((m) => !quiet.has(m.toLowerCase())) : [],
          );
        }
        return;
      }
      // A refused request ends like a sync that did not run: the check run and any waiting
      // deployment say why, where the person who asked looks.
      case "refused":
      case "synced": {
        const url = await this.check(gh, event.env, event.revision, { result: event.outcome });
        const pinned = await this.pinnedOf(event.env);
        await this.deploymentDone(gh, event.env, event.revision, event.outcome, url, pinned);
        const pr = this.pulls.get(event.revision);
        if (pr !== undefined)
          await this.updateComment(
            gh,
            pr,
            event.env,
            event.revision,
            event.outcome.phase,
            deploymentDescription(event.outcome, undefined, pinned),
            url,
          );
        return;
      }
      case "selfHealed":
        await this.check(gh, event.env, event.revision, {
          result: event.outcome,
          // The reverted table says it all when there is one; else the paths, each inert.
          ...(event.reverted?.length
            ? {}
            : { note: `Self-heal reverted out-of-band changes: ${listOf(event.drifted)}.` }),
          reverted: event.reverted,
        });
        return;
      case "driftFight":
        await this.check(gh, event.env, event.revision, { alert: toAlert(event.fight) });
        return;
      case "orphans":
        // Only risky undeclared objects are worth a check run; the rest shows in `app get`.
        if (event.orphans.some((o) => o.risk))
          await this.check(gh, event.env, event.revision, { riskyOrphans: event.orphans });
        return;
      case "outOfSync": {
        const controller = this.o.reconciler.controller(event.env);
        const { assessment } = await controller.inspect(event.revision);
        const diff = environmentDiff(assessment.plan, controller.env);
        await this.check(gh, event.env, event.revision, {
          diff,
          note: `${inertInline(event.reason)}.`,
          outOfSync: true,
        });
        return;
      }
      case "autoRollback":
        await this.autoRollback(gh, event);
        return;
      // The loop holds a revision (required checks missing, a sync window closed): the run says why.
      case "waiting":
        await this.check(gh, event.env, event.revision, {
          title: `Waiting: ${event.reason}`,
          conclusion: "neutral",
          note: `Waiting: ${inertInline(event.reason)}${event.until ? ` (until ${inertInline(event.until)})` : ""}. Nothing was applied.`,
          // A pin waits for a person: the run's own Next line then names the unpin.
          ...(event.pinned
            ? {}
            : { next: "nothing to do: it syncs by itself once what it waits for is there." }),
        });
        return;
      case "renderError":
        await this.check(
          gh,
          event.env,
          event.revision,
          renderFailedCheck(
            event,
            `fix the render error above in Git and push; \`syncward app diff ${event.env}\` renders it locally.`,
          ),
        );
        return;
      case "clusterUnavailable":
        await this.check(
          gh,
          event.env,
          event.revision,
          clusterUnavailableCheck(
            event.message,
            "Unknown",
            "nothing to do if the cluster comes back by itself: syncward tries again; otherwise check its credentials and network.",
          ),
        );
        return;
      default:
        return;
    }
  }

  /**
   * A release that stayed bad and was rolled back on its own (or not, and why): said on the bad
   * commit's check run and on the pull request that brought it, where its author looks.
   */
  private async autoRollback(
    gh: Octokit,
    event: Extract<ReconcilerEvent, { type: "autoRollback" }>,
  ): Promise<void> {
    const bad = event.revision.slice(0, 7);
    const rolledBack = event.refused === undefined;
    const title = rolledBack
      ? `Rolled back automatically to ${(event.to ?? "").slice(0, 7)}`
      : `Stayed bad; not rolled back automatically`;
    const reason = event.note?.reason ?? `${bad} stayed bad for rollback.onDegraded`;
    const evidence = event.note?.evidence.map((e) => inertInline(e)).join("; ");
    const note = rolledBack
      ? `**Automatic rollback**: ${inertInline(reason)}. ${event.env} now runs \`${(event.to ?? "").slice(0, 7)}\` again (${event.outcome?.phase ?? "started"}) and is pinned there.${evidence ? ` Evidence: ${evidence}.` : ""}`
      : `**Automatic rollback not done**: ${inertInline(event.refused ?? "")}. ${inertInline(reason)}.`;
    const next = rolledBack
      ? `fix ${bad} in Git and push; \`/unpin ${event.env}\` then deploys the branch head again (this release is never rolled back automatically twice).`
      : `roll back by hand with \`/rollback ${event.env}\`, or push a fix.`;
    const url = await this.check(gh, event.env, event.revision, { title, conclusion: "failure", note, next });
    const pr = this.pulls.get(event.revision) ?? (await this.pullOf(gh, event.revision));
    if (pr !== undefined)
      await this.updateComment(
        gh,
        pr,
        event.env,
        event.revision,
        rolledBack ? "rolled back" : "Degraded",
        note,
        url,
      );
  }

  /** The merged pull request that brought `sha`, when GitHub knows one. */
  private async pullOf(gh: Octokit, sha: string): Promise<number | undefined> {
    const { data } = await gh.rest.repos.listPullRequestsAssociatedWithCommit({
      ...this.o.repo,
      commit_sha: sha,
    });
    return data.find((p) => p.merged_at)?.number;
  }

  /**
   * What an approver is shown: the commits and pull requests the approval would deploy, the
   * listed approvers who contributed to them (and so cannot approve), and the plan as a diff
   * that compares no Secret value (everyone who reads the repository reads the check run).
   * Either may be missing (GitHub or the cluster unreadable): the check run says so, and the
   * approval reads the range again when it is given.
   */
  private async approvalWait(
    gh: Octokit,
    envName: string,
    revision: string,
  ): Promise<{ wait: ApprovalWait; diff?: string }> {
    const controller = this.o.reconciler.controller(envName);
    const env = controller.env;
    const state = await this.o.reconciler.store.load(controller.instance);
    const wait: ApprovalWait = { revision };
    try {
      const range = await fetchRange(gh, this.o.repo, state.lastSyncedRevision, revision, env.source.branch);
      const pending = state.pendingSync;
      const people = contributorsOf(
        range,
        pending ? [{ login: pending.actor, role: pending.manual ? "requested" : "pushed" }] : [],
      );
      wait.range = {
        ...(range.base === undefined ? {} : { base: range.base }),
        commits: range.commits.map((c) => ({ sha: c.sha, title: c.title, author: c.author?.login })),
        pulls: range.pulls.map((p) => ({ number: p.number, title: p.title, author: p.user?.login })),
        unclaimed: unclaimedAddresses(range),
      };
      if (!env.approval?.allowAuthor)
        wait.excluded = (env.approval?.users ?? []).filter((u) =>
          people.some((p) => p.login?.toLowerCase() === u.toLowerCase()),
        );
    } catch (err) {
      if (isTransientGitHubError(err)) throw err;
      wait.rangeError = err instanceof Error ? err.message : String(err);
    }
    let diff: string | undefined;
    try {
      const { assessment } = await controller.inspect(revision);
      diff = environmentDiff(assessment.plan, env, { blindSecrets: true });
    } catch (err) {
      this.o.log.warn({ err, env: envName, revision }, "no plan for the approval check run");
    }
    return { wait, diff };
  }

  /** Tells on the waiting check run of (env, sha) what an Approve click did; its plan and range stay. */
  async approvalNote(gh: Octokit, envName: string, sha: string, title: string, note: string): Promise<void> {
    const { wait, diff } = await this.approvalWait(gh, envName, sha);
    await this.check(gh, envName, sha, { awaitingApproval: wait, diff, title, note });
  }

  /** Creates the deployment for (env, sha) once, then moves it along queued -> in_progress. */
  private async deploymentProgress(
    gh: Octokit,
    envName: string,
    sha: string,
    status: "queued" | "in_progress",
    description: string,
  ): Promise<void> {
    const record = await this.deploymentFor(gh, envName, sha, description, status);
    // A finished deployment that syncs again (a failed one retried by `/sync`) shows the new try.
    if (status === "in_progress" && record.status !== "in_progress") {
      await this.deploymentStatus(gh, record.id, "in_progress", description, this.checksUrl(sha));
      record.status = "in_progress";
    }
  }

  /**
   * The deployment of (env, sha): remembered, else one syncward made earlier (a restart, or a
   * report that failed after GitHub created it), else a new one.
   */
  private async deploymentFor(
    gh: Octokit,
    envName: string,
    sha: string,
    description: string,
    /** The status it starts in: one that starts right away skips `queued`. */
    first: "queued" | "in_progress" = "queued",
  ): Promise<DeploymentRecord> {
    const key = this.deploymentKey(envName, sha);
    const known = this.deployments.get(key);
    if (known) return known;
    // One may exist when this process has not deployed the environment yet (it restarted), or
    // when an earlier attempt failed after GitHub may have created it (a 502 from a proxy).
    if (!this.lookedUp.has(envName) || this.attempted.has(key)) {
      const existing = await this.findDeployment(gh, envName, sha);
      this.lookedUp.add(envName);
      if (existing !== undefined) {
        const found: DeploymentRecord = { id: existing, status: "queued" };
        this.deployments.set(key, found);
        return found;
      }
    }
    this.attempted.set(key, true);
    const { data } = await gh.rest.repos.createDeployment({
      ...this.o.repo,
      ref: sha,
      environment: envName,
      auto_merge: false,
      required_contexts: [],
      production_environment: this.env(envName).production,
      transient_environment: false,
      description: oneLine(`syncward: ${description}`),
      payload: { syncward: { environment: envName } },
    });
    if (!("id" in data))
      throw new Error(`GitHub did not create a deployment for ${sha}: ${JSON.stringify(data).slice(0, 200)}`);
    const record: DeploymentRecord = { id: data.id, status: first };
    this.deployments.set(key, record);
    await this.deploymentStatus(gh, record.id, first, description, this.checksUrl(sha));
    return record;
  }

  /** The id of a deployment of `sha` to `envName` that syncward created, if GitHub has one. */
  private async findDeployment(gh: Octokit, envName: string, sha: string): Promise<number | undefined> {
    const { data } = await gh.rest.repos.listDeployments({
      ...this.o.repo,
      sha,
      environment: envName,
      per_page: 100,
    });
    const ours = data.find((d) => {
      const payload = typeof d.payload === "string" ? safeJson(d.payload) : d.payload;
      return (payload as { syncward?: unknown } | undefined)?.syncward !== undefined;
    });
    return ours?.id;
  }

  /** The environment's pin, if a rollback holds it: its deployment status and PR row say so. */
  private async pinnedOf(envName: string): Promise<{ pin: PinRecord; env: string } | undefined> {
    const controller = this.o.reconciler.controller(envName);
    const { pin } = await this.o.reconciler.store.load(controller.instance);
    return pin ? { pin, env: envName } : undefined;
  }

  private async deploymentDone(
    gh: Octokit,
    envName: string,
    sha: string,
    outcome: SyncResult,
    logUrl?: string,
    pinned?: { pin: PinRecord; env: string },
  ): Promise<void> {
    const key = this.deploymentKey(envName, sha);
    let record = this.deployments.get(key);
    // No sync started for it: nothing changed, no deployment to finish. A start whose report was
    // lost to a GitHub outage still gets its deployment, made now.
    if (!record && this.owed.has(key))
      record = await this.deploymentFor(gh, envName, sha, deploymentDescription(outcome, undefined, pinned));
    if (!record || record.status === "done") return;
    const state = outcome.phase === "Succeeded" ? "success" : outcome.phase === "Error" ? "error" : "failure";
    await this.deploymentStatus(
      gh,
      record.id,
      state,
      deploymentDescription(outcome, undefined, pinned),
      logUrl ?? this.checksUrl(sha),
      this.env(envName).environmentUrl,
    );
    record.status = "done";
    this.owed.delete(key);
    if (this.waiting.get(envName)?.sha === sha) this.waiting.delete(envName);
    // GitHub's auto_inactive skips production environments: syncward retires the one it replaces.
    if (state === "success" && this.env(envName).production) {
      const previous = this.active.get(envName);
      this.active.set(envName, record.id);
      if (previous !== undefined && previous !== record.id)
        await this.deploymentStatus(
          gh,
          previous,
          "inactive",
          `replaced by ${sha.slice(0, 7)}`,
          this.checksUrl(sha),
        );
    }
  }

  /** A deployment still waiting for approval of another commit is over: the newer one replaces it. */
  private async supersede(gh: Octokit, envName: string, sha: string): Promise<void> {
    const waiting = this.waiting.get(envName);
    if (!waiting || waiting.sha === sha) return;
    this.waiting.delete(envName);
    const record = this.deployments.get(this.deploymentKey(envName, waiting.sha));
    if (record) record.status = "done";
    await this.deploymentStatus(
      gh,
      waiting.id,
      "inactive",
      `superseded by ${sha.slice(0, 7)}`,
      this.checksUrl(waiting.sha),
    );
  }

  private checksUrl(sha: string): string {
    return `${this.o.htmlUrl}/commit/${sha}/checks`;
  }

  private async deploymentStatus(
    gh: Octokit,
    id: number,
    state: "queued" | "in_progress" | "success" | "failure" | "error" | "inactive",
    description: string,
    logUrl: string,
    environmentUrl?: string,
  ): Promise<void> {
    await gh.rest.repos.createDeploymentStatus({
      ...this.o.repo,
      deployment_id: id,
      state,
      // GitHub shows it on the environment page: one clean line within its 140 characters.
      description: oneLine(description),
      log_url: logUrl,
      ...(environmentUrl ? { environment_url: environmentUrl } : {}),
      // A successful deployment marks earlier non-transient ones of the environment inactive.
      auto_inactive: true,
    });
  }

  /** Sends the check run of (env, sha); returns its web URL. */
  async check(
    gh: Octokit,
    envName: string,
    sha: string,
    what: {
      result?: SyncResult;
      diff?: string;
      alert?: DriftFightAlert;
      awaitingApproval?: ApprovalWait;
      reverted?: RevertedChange[];
      riskyOrphans?: Array<{ object: string; risk?: string }>;
      problems?: Array<{ file?: string; line?: number; message: string }>;
      note?: string;
      /** The "Next:" line, when the caller knows what to do better than the output does. */
      next?: string;
      outOfSync?: boolean;
      title?: string;
      conclusion?: "success" | "failure" | "neutral" | "action_required";
      /** A pull-request preview: named `syncward preview / <env>`, with no buttons. */
      preview?: boolean;
      /** The previewed pull request's head and base, named instead of GitHub's test merge. */
      previewOf?: PreviewInfo;
    },
  ): Promise<string | undefined> {
    const controller = this.o.reconciler.controller(envName);
    const env = controller.env;
    const state = await this.o.reconciler.store.load(controller.instance);
    const policy = effectivePolicy(env, state);
    const output = checkRunOutput({
      env,
      state,
      result: what.result,
      diff: what.diff,
      repoBranch: env.source.branch,
      effectivePolicy: policy.label,
      alert: what.alert,
      awaitingApproval: what.awaitingApproval,
      reverted: what.reverted,
      riskyOrphans: what.riskyOrphans,
      links: {
        repoUrl: this.o.htmlUrl,
        titles: titlesOf(what.awaitingApproval),
        pulls: this.pullsOf(state.lastSyncedRevision, sha),
      },
      revision: sha,
      // Counted inside the output's budget, so a long note never pushes the totals out.
      ...(what.note ? { notes: [what.note] } : {}),
      ...(what.previewOf ? { preview: what.previewOf } : {}),
      ...(what.outOfSync ? { outOfSync: true } : {}),
      ...(what.next ? { next: what.next } : {}),
    });
    const chunks = annotationsFor(what.problems ?? []);
    const failed = (what.problems?.length ?? 0) > 0;
    const conclusion =
      what.conclusion ??
      // Waiting for approval while frozen: nothing would deploy even if approved, so no call to act.
      (what.awaitingApproval && state.freeze ? "neutral" : undefined) ??
      (failed
        ? "failure"
        : what.outOfSync
          ? "neutral"
          : conclusionFor(what.result, what.alert, what.awaitingApproval, what.reverted));
    const summary = output.summary;
    const params: CheckState = {
      ...this.o.repo,
      name: what.preview ? previewCheckName(envName) : checkName(envName),
      head_sha: sha,
      status: "completed",
      conclusion,
      completed_at: new Date().toISOString(),
      details_url: this.detailsUrl(env, sha),
      output: {
        title: titleLine(what.title ?? (failed ? "Render failed" : output.title)),
        summary,
        text: output.text,
        ...(chunks[0] ? { annotations: chunks[0] } : {}),
      },
      ...(what.preview || this.o.buttons === false
        ? {}
        : { actions: checkActions(Boolean(state.freeze), what.awaitingApproval !== undefined) }),
    };
    // A deploy check run of this commit already shown (started, waiting, synced) is updated, so
    // the commit shows one run per environment; previews are always their own run.
    const key = this.deploymentKey(envName, sha);
    const known = what.preview ? undefined : this.checkRuns.get(key);
    let id: number;
    let url: string | null | undefined;
    if (known !== undefined) {
      const { name: _name, head_sha: _sha, owner: _owner, repo: _repo, ...changes } = params;
      const { data } = await gh.rest.checks.update({ ...this.o.repo, check_run_id: known, ...changes });
      id = known;
      url = data.html_url;
    } else {
      const { data } = await gh.rest.checks.create(params);
      id = data.id;
      url = data.html_url;
      if (!what.preview) this.checkRuns.set(key, id);
    }
    for (const more of chunks.slice(1)) {
      await gh.rest.checks.update({
        ...this.o.repo,
        check_run_id: id,
        output: { title: params.output?.title ?? "", summary, annotations: more },
      });
    }
    return url ?? undefined;
  }

  /** A sync started: its check run shows at once, in progress, with what it will do. */
  async checkStarted(
    gh: Octokit,
    envName: string,
    sha: string,
    description: string,
    planned: string[],
  ): Promise<void> {
    const env = this.env(envName);
    const list = planned.length > 0 ? `\n\n${fenced(planned.join("\n"))}` : "";
    const { data } = await gh.rest.checks.create({
      ...this.o.repo,
      name: checkName(envName),
      head_sha: sha,
      status: "in_progress",
      started_at: new Date().toISOString(),
      details_url: this.detailsUrl(env, sha),
      output: {
        title: titleLine(`Syncing: ${description}`),
        summary: fitMarkdown(
          `syncward is syncing **${envName}** to \`${sha.slice(0, 7)}\`; this run completes with the result.${list}`,
          CHECK_OUTPUT_MAX_BYTES,
          "",
        ),
      },
    });
    this.checkRuns.set(this.deploymentKey(envName, sha), data.id);
  }

  /** The merged pull requests of the commits a check run names, where this process saw the merge. */
  private pullsOf(...shas: Array<string | undefined>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const sha of shas) {
      const pr = sha === undefined ? undefined : this.pulls.get(sha);
      if (sha !== undefined && pr !== undefined) out[sha] = pr;
    }
    return out;
  }

  /** Where "Details" leads: the environment's own URL, else the commit's checks on GitHub. */
  private detailsUrl(env: EnvironmentConfig, sha: string): string {
    return env.environmentUrl ?? this.checksUrl(sha);
  }

  private async updateComment(
    gh: Octokit,
    pr: number,
    env: string,
    revision: string,
    status: string,
    note: string,
    checkUrl?: string,
    /** Configured approvers to notify (approverMentions). */
    approvers?: string[],
  ): Promise<void> {
    let entry = this.comments.get(pr);
    if (!entry) {
      entry = { rows: new Map() };
      this.comments.set(pr, entry);
    }
    entry.rows.set(env, {
      env,
      status,
      revision,
      checkUrl,
      note,
      ...(approvers?.length ? { approvers } : {}),
    });
    const body = prCommentBody([...entry.rows.values()], COMMENT_MARKER, { repoUrl: this.o.htmlUrl });
    if (entry.id === undefined) {
      const { data } = await gh.rest.issues.createComment({ ...this.o.repo, issue_number: pr, body });
      entry.id = data.id;
    } else {
      await gh.rest.issues.updateComment({ ...this.o.repo, comment_id: entry.id, body });
    }
  }
}

/**
 * Worth sending again later: GitHub away or limiting us, or the cluster (a report reads the
 * state, and an out-of-sync one assesses the environment) away; also when wrapped in `cause`.
 */
export function isTransientReportError(err: unknown): boolean {
  return isTransientGitHubError(err) || causes(err).some(isTransientKubeError);
}

/** Who failed a report for good, for the log: GitHub only when GitHub answered. */
export function failureOf(err: unknown): string {
  const answered = causes(err).find((e) => (e as { request?: unknown } | null)?.request !== undefined);
  if (answered !== undefined) return `GitHub refused it (${statusOf(answered)})`;
  return `preparing it failed: ${err instanceof Error ? err.message : String(err)}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A check run's title: one line within GitHub's 255 bytes, cut with an ellipsis (never a byte-count marker). */
function titleLine(title: string): string {
  const line = oneLine(title, 200);
  return byteLength(line) <= 255 ? line : `${prefixByBytes(line, 252)}…`;
}

/** Commit titles the report already holds (the approval range), for links that name them. */
function titlesOf(wait: ApprovalWait | undefined): Record<string, string> {
  const titles: Record<string, string> = {};
  for (const c of wait?.range?.commits ?? []) if (c.title) titles[c.sha] = c.title;
  return titles;
}

/** Paths as code spans, at most ten, the rest counted. */
function listOf(items: string[]): string {
  const shown = items.slice(0, 10).map((i) => codeSpan(i, 200));
  return `${shown.join(", ")}${items.length > 10 ? ` and ${items.length - 10} more` : ""}`;
}

function toAlert(f: DriftFight): DriftFightAlert {
  return {
    object: f.object,
    fields: f.fields,
    managers: f.managers,
    heals: f.heals,
    windowMinutes: f.windowMinutes,
    ignoreSnippet: f.ignoreSnippet,
  };
}
