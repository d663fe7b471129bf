// Doing what the environment controller decided (decide.ts): rendering a revision, recording an
// operation in history, advancing to a revision that changes nothing, and answering a request the
// gate stopped. The operations that write live beside it: sync-operation.ts and self-heal.ts.

import { guardsOf } from "../config/stricter.ts";
import type { EnvironmentConfig } from "../config/types.ts";
import { outcomeWithoutWork, type SyncOutcome, type SyncRequest, type SyncTarget } from "../engine/sync.ts";
import { clusterCapabilities } from "../kube/capabilities.ts";
import type { KubeObject } from "../kube/object.ts";
import { timed } from "../observability/durations.ts";
import { commitTitle } from "../source/commit-title.ts";
import { SourceError } from "../source/errors.ts";
import { type RenderedSource, type RenderOptions, render } from "../source/render.ts";
import type { RemoteChart } from "../source/render-helm.ts";
import { appendHistory } from "../state/history.ts";
import { healthAfter } from "../state/recorded-health.ts";
import type { RetriedAttempts } from "../state/retried.ts";
import type { EnvironmentState, HistoryEntry, Trigger } from "../state/types.ts";
import { Cached } from "../util/cached.ts";
import type { ControllerOptions } from "./environment-controller.ts";
import { Gate } from "./gate.ts";
import type { GateDecision, WritePath } from "./gate-decision.ts";
import { clearConsumedPush } from "./handed-over-push.ts";
import { historyEntryOf } from "./history-entry.ts";
import type { Promotion } from "./promotion/promotion.ts";
import { renderSeen } from "./render-binding.ts";

export class EnvironmentEffects {
  readonly gate: Gate;
  readonly target: SyncTarget;
  private readonly rendered = new Map<string, Promise<RenderedSource>>();
  /**
   * One per sync that writes, aborted by stop(): it makes no further attempt (the lease may be
   * someone else's). Fresh per sync, so a stopped controller still serves later requests.
   */
  readonly writing = new Set<AbortController>();
  /** The last wait announced (revision and reason), so a poll does not announce it again. */
  private lastWaiting = "";
  /** The environment's promotion (promotion/), when it has upstreams: it decides the revision to take. */
  promotion?: Promotion;

  constructor(
    readonly o: ControllerOptions,
    readonly instance: string,
    readonly hooks: { wakeAt: (when: Date | undefined) => void; stopped: () => boolean },
  ) {
    this.target = {
      instance,
      env: o.env,
      health: o.health,
      ...(o.reservedNamespaces ? { reservedNamespaces: o.reservedNamespaces } : {}),
    };
    this.gate = new Gate({
      env: o.env,
      store: o.store,
      instance,
      source: o.source,
      checks: o.checks,
      emit: o.emit,
      log: o.log,
      renderOf: (sha) =>
        this.desiredAt(sha).then((r) => renderSeen(r.objects, this.o.env.destination.namespace)),
      evidenceOf: async (sha) => (await this.promotion?.evidenceOf(sha))?.text,
    });
  }

  desiredAt(sha: string): Promise<RenderedSource> {
    let r = this.rendered.get(sha);
    if (!r) {
      const where = { instance: this.instance, env: this.o.env.name };
      r = timed({ kind: "fetch", ...where }, () => this.o.source.tree(sha)).then((dir) =>
        timed({ kind: "render", ...where }, () => render(dir, this.o.env.source.path, this.renderOptions())),
      );
      r.catch(() => this.rendered.delete(sha));
      this.rendered.set(sha, r);
      // Keep only recent revisions in memory.
      if (this.rendered.size > 4) this.rendered.delete(this.rendered.keys().next().value as string);
    }
    return r;
  }

  /** Chart sources: the release and what the destination serves for `.Capabilities` (read once a while). */
  renderOptions(): RenderOptions {
    return {
      helmContext: {
        settings: this.o.env.source.helm,
        releaseName: this.o.env.name,
        namespace: this.o.env.destination.namespace,
        capabilities: () => this.capabilities.get(),
        ...remoteChart(this.o.env.source),
      },
      ...(this.o.env.project?.chartCredentials
        ? { credentialsGranted: this.o.env.project.chartCredentials }
        : {}),
    };
  }

  readonly capabilities = new Cached(10 * 60_000, () => clusterCapabilities(this.o.client));

  request(
    revision: string,
    objects: KubeObject[],
    prune: boolean,
    state: EnvironmentState,
    extra: Partial<SyncRequest> = {},
  ): SyncRequest {
    return {
      revision,
      objects,
      prune,
      inventory: state.inventory,
      hooksDigest: state.hooksDigest,
      healthTimeoutMs: this.o.healthTimeoutMs,
      ...extra,
    };
  }

  /**
   * Writes one operation to history. `retried` are its attempts that failed and were retried:
   * written with the final outcome, since during an outage of the API server the state they
   * belong in is unreachable anyway.
   */
  async record(
    trigger: Trigger,
    actor: string,
    outcome: SyncOutcome,
    mutate: (s: EnvironmentState) => void,
    drifted?: string[],
    { retried, omitted }: RetriedAttempts = { retried: [], omitted: 0 },
    extra: Partial<HistoryEntry> = {},
  ): Promise<{ state: EnvironmentState; entry: HistoryEntry }> {
    let entry!: HistoryEntry;
    const title = await this.titleOf(outcome.revision);
    const state = await this.o.store.update(this.instance, (s) => {
      entry = appendHistory(
        s,
        {
          ...historyEntryOf(trigger, actor, outcome, drifted),
          ...(title === undefined ? {} : { title }),
          ...(retried.length > 0 ? { retried } : {}),
          ...(omitted > 0 ? { retriedOmitted: omitted } : {}),
          ...extra,
        },
        this.o.env.revisionHistoryLimit,
      );
      if (outcome.inventory.length > 0) s.inventory = outcome.inventory;
      s.health = healthAfter(s.health, outcome);
      mutate(s);
    });
    return { state, entry };
  }

  /** The commit's title as the source knows it; a label only, so never a reason to fail. */
  private async titleOf(revision: string): Promise<string | undefined> {
    try {
      return commitTitle(await this.o.source.commitTitle?.(revision));
    } catch {
      return undefined;
    }
  }

  async renderOrReport(
    head: string,
    state: EnvironmentState,
    trigger: Trigger,
    actor: string,
  ): Promise<RenderedSource | undefined> {
    try {
      return await this.desiredAt(head);
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      const message = err.message;
      if (state.lastError?.revision === head && state.lastError.message === message) return undefined;
      const now = new Date().toISOString();
      const outcome = outcomeWithoutWork(head, "Error", `render failed: ${message}`);
      await this.record(trigger, actor, outcome, (s) => {
        s.lastError = { revision: head, message, at: now };
        s.syncStatus = "Unknown";
      });
      this.o.log.warn(
        { instance: this.instance, revision: head, problems: err.problems },
        "render failed; nothing applied",
      );
      this.o.emit({
        type: "renderError",
        instance: this.instance,
        env: this.o.env.name,
        revision: head,
        message,
        problems: err.problems,
      });
      return undefined;
    }
  }

  /**
   * The destination resolves to no cluster, or its cluster cannot be read: recorded once per
   * revision and reason (history, the check run, `syncStatus: Unknown`); nothing is read from or
   * written to any cluster, so nothing is pruned and nothing is reported Synced.
   */
  async reportDestination(
    head: string,
    state: EnvironmentState,
    trigger: Trigger,
    actor: string,
    message: string,
  ): Promise<SyncOutcome> {
    const outcome = outcomeWithoutWork(head, "Error", `${message}; nothing was applied`);
    // One entry per problem, not per flap: an outage's start time is not part of what it is.
    const gist = (m: string) => m.replace(/ unreachable since \S+ \(.*\)$/, " unreachable");
    // (While it still reads Unknown: after a pass that read the cluster again, a new outage is news.)
    if (
      state.syncStatus === "Unknown" &&
      state.lastError?.revision === head &&
      gist(state.lastError.message) === gist(message)
    )
      return outcome;
    const now = new Date().toISOString();
    await this.record(trigger, actor, outcome, (s) => {
      s.lastError = { revision: head, message, at: now };
      s.syncStatus = "Unknown";
      s.health = "Unknown";
    });
    this.o.log.warn({ instance: this.instance, revision: head }, message);
    this.o.emit({
      type: "clusterUnavailable",
      instance: this.instance,
      env: this.o.env.name,
      revision: head,
      message,
    });
    return outcome;
  }

  /**
   * The head renders exactly what is deployed (a docs-only commit): it becomes the deployed
   * revision without a sync, an approval or a GitHub deployment; history says "no change".
   */
  async advanceUnchanged(head: string, trigger: Trigger, actor: string): Promise<void> {
    const now = new Date().toISOString();
    const outcome = {
      ...outcomeWithoutWork(head, "Succeeded", `no change for ${this.o.env.name}`),
      startedAt: now,
    };
    const { entry } = await this.record(trigger, actor, outcome, (s) => {
      s.lastSyncedRevision = head;
      // Only a revision that loosens no guard gets here: its config is the one now in force.
      s.deployedRules = { revision: head, ...guardsOf(this.o.env) };
      s.stuck = undefined;
      s.lastError = undefined;
      if (s.pendingSync && s.pendingSync.revision !== head) s.pendingSync = undefined;
      clearConsumedPush(s, head);
    });
    this.o.log.info({ instance: this.instance, revision: head, history: entry.id }, outcome.message);
    this.o.emit({ type: "unchanged", instance: this.instance, env: this.o.env.name, revision: head, entry });
  }

  /** The gate refused a person's request before anything ran: answered and reported as refused. */
  refuseManual(
    decision: GateDecision & { allowed: false },
    revision: string,
    trigger: Trigger,
    actor: string,
  ): Promise<SyncOutcome & { held: GateDecision }> {
    return this.heldBy(
      decision,
      outcomeWithoutWork(revision, "Refused", decision.reason),
      "manual",
      trigger,
      actor,
    );
  }

  /**
   * The gate stopped a sync before its first write. The loop's own sync waits (a window: until it
   * opens; required checks: until they pass); a person's request is refused where it was made
   * (the caller's answer, and a `refused` event for the check run and deployment status).
   */
  async heldBy(
    decision: GateDecision & { allowed: false },
    outcome: SyncOutcome,
    path: WritePath,
    trigger: Trigger,
    actor: string,
  ): Promise<SyncOutcome & { held: GateDecision }> {
    const env = this.o.env;
    const revision = outcome.revision;
    if (path === "automated") {
      const waits = decision.check === "window" || decision.check === "checks";
      // Said once per revision and reason, not on every poll (each would update a check run).
      const said = `${revision}|${decision.reason}`;
      if (decision.check === "window") this.hooks.wakeAt(decision.until);
      if (waits && said !== this.lastWaiting) {
        this.lastWaiting = said;
        await this.o.store.update(this.instance, (s) => {
          s.syncStatus = "OutOfSync";
        });
        this.o.emit({
          type: "waiting",
          instance: this.instance,
          env: env.name,
          revision,
          reason: decision.reason.replace(/^refused: /, ""),
          until: decision.until?.toISOString(),
        });
      }
      return { ...outcome, held: decision };
    }
    if (decision.check !== "approval") {
      this.o.log.warn(
        { instance: this.instance, revision, actor, reason: decision.reason },
        "a requested sync was refused",
      );
      this.o.emit({
        type: "refused",
        instance: this.instance,
        env: env.name,
        revision,
        trigger,
        actor,
        outcome,
      });
    }
    return { ...outcome, held: decision };
  }
}

/** source.chart, repoURL and targetRevision, when the chart comes from a chart repository. */
function remoteChart(source: EnvironmentConfig["source"]): { remote?: RemoteChart } {
  const { chart, repoURL, targetRevision } = source;
  return chart && repoURL && targetRevision ? { remote: { chart, repoURL, version: targetRevision } } : {};
}
