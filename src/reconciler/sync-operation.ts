// One sync operation: attempts with retries (Argo CD's retry), each asking the gate with the exact
// revision it is about to apply immediately before its first write, then one history entry.
import { formatDuration } from "../config/duration.ts";
import { guardsOf } from "../config/stricter.ts";
import { errorMessage } from "../engine/resource-results.ts";
import { syncWithRetry } from "../engine/retry.ts";
import { outcomeWithoutWork, type SyncOutcome, type SyncRequest, syncEnvironment } from "../engine/sync.ts";
import { isTransient, KubeApiError } from "../kube/errors.ts";
import { SourceError } from "../source/errors.ts";
import type { RenderedSource } from "../source/render.ts";
import { addRetried, type RetriedAttempts } from "../state/retried.ts";
import type { EnvironmentState, Trigger } from "../state/types.ts";
import type { EnvironmentEffects } from "./effects.ts";
import type { GateRequest } from "./gate.ts";
import type { GateDecision, WritePath } from "./gate-decision.ts";
import { plannedLines } from "./history-entry.ts";
import { type RenderSeen, renderSeen } from "./render-binding.ts";

const SHORT = (sha: string) => sha.slice(0, 7);

export async function syncRevision(
  fx: EnvironmentEffects,
  head: string,
  trigger: Trigger,
  actor: string,
  opts: {
    prune: boolean;
    force?: boolean;
    dryRun?: boolean;
    overridePruneLimit?: boolean;
    allowEmpty?: boolean;
    confirmPrune?: boolean;
    pinned?: boolean;
    onProgress?: SyncRequest["onProgress"];
    /** Started by the loop's own pass, which a stop() before this point has already ended. */
    loop?: boolean;
    /** Which write path this is, for the gate: the automated pass or a person's request. */
    path: Extract<WritePath, "automated" | "manual">;
    ignoreFreeze?: boolean;
    needsApproval?: boolean;
  },
): Promise<SyncOutcome & { held?: GateDecision }> {
  const env = fx.o.env;
  let state = await fx.o.store.load(fx.instance);
  let lastTrigger = trigger;
  let retried: RetriedAttempts = { retried: [], omitted: 0 };
  /** The last attempt could not fetch the source: not the revision's fault. */
  let unfetched = false;
  /** What the gate said when it stopped the last attempt before its first write. */
  let held: (GateDecision & { allowed: false }) | undefined;
  let digest: RenderSeen | undefined;
  let rules = env;
  /**
   * The render the first attempt at a revision was allowed to apply: its retries apply exactly it,
   * never a fresh render of the same revision that nobody approved.
   */
  let pinnedRender: { revision: string; rendered: RenderedSource } | undefined;
  const ask = (
    path: WritePath,
    revision: string,
    wait?: GateRequest["wait"],
    read?: EnvironmentState,
    render?: RenderSeen,
  ) =>
    fx.gate.check({
      path,
      revision,
      trigger,
      actor,
      ignoreFreeze: opts.ignoreFreeze,
      needsApproval: opts.needsApproval,
      wait,
      state: read,
      ...(render ? { render } : {}),
    });
  // A dry run writes nothing, so losing the lease does not concern it.
  const abort = opts.dryRun ? undefined : new AbortController();
  if (abort) fx.writing.add(abort);
  if (opts.loop && fx.hooks.stopped()) abort?.abort();
  const signal = abort?.signal;
  const outcome = await syncWithRetry(
    env.syncPolicy.retry,
    async (n) => {
      unfetched = false;
      held = undefined;
      // A retry stays on its operation's revision (Argo CD); with retry.refresh it moves to the
      // newest one, only if that passes every gate a new revision must pass (a gated
      // environment's retry never moves: what was approved is what it retries).
      const newest =
        n === 1 || opts.pinned || !env.syncPolicy.retry.refresh
          ? head
          : await fx.o.source.head(env.source.branch);
      const moves =
        newest !== head && (await ask("refresh", newest, { manual: false, prune: opts.prune })).allowed;
      const revision = moves ? newest : head;
      if (n > 1) lastTrigger = "retry";
      let rendered: RenderedSource;
      try {
        rendered = pinnedRender?.revision === revision ? pinnedRender.rendered : await fx.desiredAt(revision);
      } catch (err) {
        // Only a SourceError is the revision's fault; anything else (GitHub down or limiting us)
        // means the source could not be fetched: worth a retry, and no reason to mark it stuck.
        if (!(err instanceof SourceError)) {
          unfetched = true;
          return {
            ...outcomeWithoutWork(
              revision,
              "Failed",
              `fetching ${SHORT(revision)} failed: ${errorMessage(err)}`,
              opts.dryRun,
            ),
            retryable: true,
          };
        }
        return outcomeWithoutWork(revision, "Error", `render failed: ${err.message}`, opts.dryRun);
      }
      try {
        state = await fx.o.store.load(fx.instance);
      } catch (err) {
        // The state lives in syncward's own namespace, which deploy/ grants: a 403 there comes
        // from an API server that has just started and not yet loaded its RBAC (it answers
        // before its informers sync, kubernetes#101422), so it is retried like an outage.
        const startingUp = err instanceof KubeApiError && err.forbidden;
        return {
          ...outcomeWithoutWork(
            revision,
            "Failed",
            `reading the environment's state failed: ${errorMessage(err)}`,
            opts.dryRun,
          ),
          retryable: isTransient(err) || startingUp,
        };
      }
      // The gate, immediately before the first write, with the exact revision and render to be applied.
      const seen = renderSeen(rendered.objects, fx.o.env.destination.namespace);
      if (!opts.dryRun) {
        const path: WritePath = n === 1 ? opts.path : moves ? "refresh" : "retry";
        const decision = await ask(
          path,
          revision,
          path === "automated" ? { manual: false, prune: opts.prune } : undefined,
          state,
          seen,
        );
        if (!decision.allowed) {
          held = decision;
          return outcomeWithoutWork(revision, "Refused", decision.reason);
        }
        rules = decision.rules;
      }
      digest = seen;
      pinnedRender = { revision, rendered };
      return syncEnvironment(
        fx.o.client,
        { ...fx.target, env: rules },
        fx.request(revision, rendered.objects, opts.prune, state, {
          force: opts.force,
          dryRun: opts.dryRun,
          overridePruneLimit: opts.overridePruneLimit,
          allowEmpty: opts.allowEmpty,
          confirmPrune: opts.confirmPrune,
          // Hooks run on every sync someone asked for; a new revision runs them when it changes something.
          hooks: AUTOMATIC.has(trigger) ? "ifChanged" : "always",
          origins: originsOf(rendered),
          onProgress: (event) => {
            opts.onProgress?.(event);
            // Each wave that starts shows on the sync's live check run (the reporter throttles).
            if (event.type === "wave" && !opts.dryRun)
              fx.o.emit({
                type: "syncProgress",
                instance: fx.instance,
                env: env.name,
                revision,
                wave: event.wave,
                objects: event.objects,
              });
          },
          signal,
          onPlan: (plan) => {
            if (opts.dryRun) return;
            const changes = plan.steps.reduce((n, st) => n + st.tasks.length, 0) + plan.prunes.length;
            fx.o.emit({
              type: "syncStarted",
              instance: fx.instance,
              env: env.name,
              revision,
              trigger: lastTrigger,
              actor,
              changes,
              planned: plannedLines(plan),
            });
          },
        }),
      );
    },
    {
      signal,
      revision: head,
      dryRun: opts.dryRun,
      onRetry: (n, failed, delay) => {
        retried = addRetried(retried, {
          attempt: n,
          startedAt: failed.startedAt,
          finishedAt: failed.finishedAt,
          revision: failed.revision,
          message: `${failed.message} (retrying in ${formatDuration(delay)})`,
        });
        fx.o.log.warn(
          {
            instance: fx.instance,
            attempt: n,
            revision: failed.revision,
            delayMs: delay,
            error: failed.message,
          },
          "sync failed; retrying",
        );
      },
    },
  ).finally(() => abort && fx.writing.delete(abort));
  if (outcome.dryRun) return outcome;
  // Stopped by the gate before anything was written: nothing to record, the request hears why.
  if (held && held.check !== "signature" && outcome.attempts === 1)
    return fx.heldBy(held, outcome, opts.path, trigger, actor);
  const ok = outcome.phase === "Succeeded";
  // Stopped by this replica stopping (SIGTERM) or losing its lease: the writes made stand, the rest
  // is left to the next holder, which syncs the revision again; it is not the revision's fault.
  const interrupted = !ok && signal?.aborted === true;
  if (interrupted)
    outcome.message = `stopped at a safe point (this replica is stopping or lost its lease; the next holder syncs again): ${outcome.message}`;
  const { entry } = await fx.record(
    lastTrigger,
    actor,
    outcome,
    (s) => {
      if (ok) {
        s.lastSyncedRevision = outcome.revision;
        if (outcome.hooksDigest !== undefined) s.hooksDigest = outcome.hooksDigest;
        s.syncStatus = outcome.resources.some((r) => r.status === "OutOfSync") ? "OutOfSync" : "Synced";
        s.stuck = undefined;
        s.lastError = undefined;
        s.selfHeals = {};
        if (s.pendingSync?.revision === outcome.revision) s.pendingSync = undefined;
        s.pendingApprovals = s.pendingApprovals.filter((a) => a.sha !== outcome.revision);
        s.deployedRules = { revision: outcome.revision, ...guardsOf(env) };
        if (digest !== undefined) {
          s.renderedDigest = digest.digest;
          s.renderedObjects = digest.objects;
        }
      } else {
        s.syncStatus = "OutOfSync";
        // A source that could not be fetched is tried again by the next pass, not held as stuck;
        // neither is a retry the gate stopped (a freeze meanwhile).
        if (!unfetched && !interrupted && !(held && held.check !== "signature"))
          s.stuck = {
            revision: outcome.revision,
            reason: outcome.message,
            since: new Date().toISOString(),
          };
      }
    },
    undefined,
    retried,
  );
  fx.o.log.info(
    {
      instance: fx.instance,
      revision: outcome.revision,
      trigger: lastTrigger,
      result: outcome.phase,
      writes: outcome.writes,
    },
    outcome.message,
  );
  fx.o.emit({
    type: "synced",
    instance: fx.instance,
    env: env.name,
    revision: outcome.revision,
    trigger: lastTrigger,
    actor,
    outcome,
    entry,
  });
  if (!ok && !unfetched && !interrupted && !(held && held.check !== "signature"))
    fx.o.emit({
      type: "stuck",
      instance: fx.instance,
      env: env.name,
      revision: outcome.revision,
      reason: outcome.message,
    });
  return outcome;
}

/** Where each object is declared, so a failure can name the file and line. */
function originsOf(rendered: RenderedSource): Map<string, string> {
  return new Map([...rendered.files].map(([key, file]) => [key, `${file}:${rendered.lines.get(key) ?? 1}`]));
}

/** Triggers of a sync nobody asked for: a new revision found by a push, a merge or a poll. */
const AUTOMATIC = new Set<Trigger>(["push", "merge", "poll"]);
