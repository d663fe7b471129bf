// The one gate of an environment. Every path that writes (the automated pass, a retry, self-heal,
// a manual sync from the CLI, a comment or the Sync button, a released approval, a sync handed
// over by another replica) calls `check` with the exact revision it is about to apply,
// immediately before its first write. It gathers what the decision needs (state, the rules in
// force, a signature verdict, required checks) and leaves the deciding to decideGate (pure).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { findEnvironment, parseConfig } from "../config/load.ts";
import {
  approvedConfigOf,
  type Guards,
  guardsOf,
  inheritGuards,
  renderConfigMoved,
  sharedWith,
  stricterRules,
} from "../config/stricter.ts";
import type { EnvironmentConfig, RequiredCheck } from "../config/types.ts";
import { outcomeWithoutWork } from "../engine/sync.ts";
import { appendHistory } from "../state/history.ts";
import type { StateStore } from "../state/store.ts";
import type { EnvironmentState, PendingSync, PinRecord, RecordedPush, Trigger } from "../state/types.ts";
import type { Logger } from "./environment-controller.ts";
import type { Emit } from "./events.ts";
import { applies, decideGate, type GateDecision, type WritePath } from "./gate-decision.ts";
import { historyEntryOf } from "./history-entry.ts";
import { pinnedRenderRefusal } from "./pin.ts";
import {
  approvedRenderMoved,
  bindsRender,
  deployedRenderMoved,
  type RenderSeen,
  renderChangedReason,
} from "./render-binding.ts";
import { checkLabel, type RequiredChecks } from "./required-checks.ts";
import type { RevisionSource } from "./revision-source.ts";

export interface GateRequest {
  path: WritePath;
  revision: string;
  trigger: Trigger;
  actor: string;
  ignoreFreeze?: boolean;
  /** A person's request that must be approved on a gated environment (not the CLI). */
  needsApproval?: boolean;
  /** When approval is missing: record the wait (once per revision) with these flags and announce it. */
  wait?: Pick<PendingSync, "manual" | "prune" | "force" | "allowEmpty" | "confirmPrune" | "actorId">;
  /** The state as the caller read it immediately before (else the gate reads it). */
  state?: EnvironmentState;
  /** The render about to be written, by a caller that holds it (else a gated environment's gate renders). */
  render?: RenderSeen;
  /** The pin this write is to be held to: a rollback's, before it is set (else the state's). */
  pin?: PinRecord;
  /** Said after the reason of a wait for approval (a pinned environment's: approving ends the pin). */
  waitNote?: string;
}

export interface GateOptions {
  /** The environment's config as loaded (floors applied). */
  env: EnvironmentConfig;
  instance: string;
  store: StateStore;
  source: RevisionSource;
  checks?: RequiredChecks;
  emit: Emit;
  log: Logger;
  configFile?: string;
  /** What a revision renders now (the environment's render cache): what an approval binds. */
  renderOf?: (sha: string) => Promise<RenderSeen>;
  /** A promotion's evidence for a revision, shown with its wait for approval (promotion/). */
  evidenceOf?: (sha: string) => Promise<string | undefined>;
}

/** Pushes remembered per gate: a wait is announced within a pass or two of its push. */
const PUSHERS_KEPT = 16;

export class Gate {
  /** Guards read from a deployed revision's config file, for states written before they were kept. */
  private readonly readGuards = new Map<string, Promise<Guards | undefined>>();
  /** Who pushed (or merged) each recent revision, as its push webhook named them (a cache of the state's). */
  private readonly pushers = new Map<string, RecordedPush>();

  constructor(private readonly o: GateOptions) {}

  /** The rules a new revision is gated by: the stricter of the deployed revision's and the current ones. */
  async rules(state: EnvironmentState): Promise<{ rules: EnvironmentConfig; weakens: string[] }> {
    const deployed =
      state.deployedRules ??
      (state.lastSyncedRevision ? await this.guardsAt(state.lastSyncedRevision) : undefined);
    // An environment that can write a gated environment's namespaces (a new one, a renamed one,
    // or a neighbour whose policy.namespaces grew) is held to that environment's rules as well:
    // otherwise it would take the gated environment's objects over without its approval.
    return (await this.neighbours()).reduce(
      (r, n) => inheritGuards(r, n.name, n.guards, n.shared),
      stricterRules(this.o.env, deployed),
    );
  }

  /**
   * The revision what would be deployed is measured from, which approvals are judged against:
   * the last synced revision; for an environment that never synced but inherits a gated
   * environment's rules, that environment's (else a rename would judge only the head commit).
   * "" when there is none: a first deployment is judged on its head commit alone.
   */
  async base(state: EnvironmentState): Promise<string> {
    if (state.lastSyncedRevision || state.deployedRules) return state.lastSyncedRevision ?? "";
    return (await this.neighbours())[0]?.base ?? "";
  }

  /**
   * The gated environments (any app's, from the states beside ours) whose namespaces or
   * cluster-scoped kinds this one may write too, strictest first: it inherits their rules.
   */
  private async neighbours(): Promise<
    Array<{ name: string; guards: Guards; base: string; shared: string[] }>
  > {
    const gated = (await this.o.store.list())
      .filter((s) => s.environment !== this.o.instance)
      .flatMap((s) => {
        const guards = s.deployedRules;
        if (!guards?.approval) return [];
        const shared = sharedWith(this.o.env, guards);
        if (shared.length === 0) return [];
        return [{ name: s.environment, guards, base: s.lastSyncedRevision ?? guards.revision, shared }];
      });
    return gated.sort((a, b) => (b.guards.approval?.minimum ?? 0) - (a.guards.approval?.minimum ?? 0));
  }

  /**
   * A push webhook named who moved the branch to `push.after`. Kept by revision, not taken from the
   * pass that announces a wait: that pass may have been started by a poll or an earlier push. Written
   * to the environment's state by whichever replica received the push, so the replica holding the
   * lease, a restarted one and a manual wait know it too; and onto a wait a poll announced first.
   */
  pushedBy(push: RecordedPush): void {
    const record: RecordedPush = {
      after: push.after,
      login: push.login,
      ...(push.before === undefined ? {} : { before: push.before }),
      ...(push.id === undefined ? {} : { id: push.id }),
    };
    this.pushers.delete(record.after);
    this.pushers.set(record.after, record);
    if (this.pushers.size > PUSHERS_KEPT) this.pushers.delete(this.pushers.keys().next().value as string);
    this.recordPusher(record).catch((err: unknown) =>
      this.o.log.warn(
        { err, instance: this.o.instance, revision: record.after },
        "could not record who pushed the revision in the state; a wait at it is refused approval until the push is known",
      ),
    );
  }

  private async recordPusher(push: RecordedPush): Promise<void> {
    await this.o.store.update(this.o.instance, (s) => {
      const kept = (s.recentPushes ?? []).filter((p) => p.after !== push.after);
      s.recentPushes = [...kept, push].slice(-PUSHERS_KEPT);
      if (s.pendingSync?.revision === push.after && s.pendingSync.pusher === undefined) {
        s.pendingSync.pusher = push.login;
        if (push.id !== undefined) s.pendingSync.pusherId = push.id;
      }
    });
  }

  /** Asks the gate; a missing approval is recorded and announced when the request says `wait`. */
  async check(
    request: GateRequest,
  ): Promise<GateDecision & { rules: EnvironmentConfig; state: EnvironmentState }> {
    let state = request.state ?? (await this.o.store.load(this.o.instance));
    // A request for another operation on the revision waiting (`/sync --prune` on an automated
    // wait): the approvals given so far were of the other one, and release nothing now.
    const waiting = state.pendingSync?.revision === request.revision ? state.pendingSync : undefined;
    if (request.wait && waiting && !sameOperation(waiting, request.wait))
      state = await this.o.store.update(this.o.instance, (s) => {
        s.pendingApprovals = s.pendingApprovals.filter((a) => a.sha !== request.revision);
      });
    // Re-applying the deployed revision (self-heal, a retry, a re-sync) re-applies what was approved,
    // unless a config change since (source or destination settings, possibly made on another
    // branch) renders that commit differently now: that is a new release.
    // So does a render of it that differs from the one applied (a remote input, a chart's version).
    const bound = await this.renderBinding(request, state);
    const deployed =
      state.lastSyncedRevision === request.revision &&
      !renderConfigMoved(this.o.env, state.deployedRules) &&
      !bound.deployedMoved;
    const { rules, weakens } = deployed ? { rules: this.o.env, weakens: [] } : await this.rules(state);
    const needsApproval = !deployed && (request.needsApproval ?? false);
    const shape = { path: request.path, rules, needsApproval };
    const decision = decideGate({
      ...shape,
      revision: request.revision,
      state,
      base: await this.base(state),
      now: new Date(),
      ignoreFreeze: request.ignoreFreeze,
      config: approvedConfigOf(this.o.env),
      weakens,
      render: bound.render?.digest,
      renderChanged: bound.changed,
      pinnedRender: await this.pinnedRender(request, state, bound.render),
      signatureProblem: applies("signature", shape)
        ? await this.signatureProblem(request.revision)
        : undefined,
      missingChecks:
        applies("checks", shape) && rules.requireChecks
          ? await this.missingChecks(request.revision, rules.requireChecks)
          : undefined,
    });
    // Approvers of a promoted commit see what its upstreams proved ("staging: Healthy for 34m ...").
    if (!decision.allowed && decision.check === "approval") {
      const evidence = await this.o.evidenceOf?.(request.revision);
      if (evidence) decision.reason = `${decision.reason}; promotion: ${evidence}`;
      if (request.waitNote) decision.reason = `${decision.reason}; ${request.waitNote}`;
    }
    if (!decision.allowed && decision.check === "pin")
      await this.reportPinned(request, state, decision.reason);
    const missing = !decision.allowed && (decision.approvals?.length ?? 0) < (decision.needed ?? 0);
    if (!decision.allowed && decision.check === "approval" && missing && request.wait && !deployed)
      await this.announceWait(
        request,
        state,
        decision.approvals ?? [],
        decision.needed ?? 0,
        decision.reason,
        bound.render,
      );
    // The state it decided on, for a caller that needs it right before writing (self-heal's counters).
    return { ...decision, rules, state };
  }

  /**
   * What the approval binds on a gated environment: the render to be applied (the caller's, else
   * rendered now), whether it differs from the deployed render of the same revision, and why it
   * waits when it differs from the deployed one or from the one approvals were given for.
   * A render that fails here is left to the write, which renders again and reports it.
   */
  private async renderBinding(
    request: GateRequest,
    state: EnvironmentState,
  ): Promise<{ render?: RenderSeen; deployedMoved: boolean; changed?: string }> {
    if (!bindsRender(this.o.env, state)) return { deployedMoved: false };
    const render = request.render ?? (await this.o.renderOf?.(request.revision).catch(() => undefined));
    const deployed = deployedRenderMoved(state, request.revision, render);
    // The render deployed is approved, whatever approvals of another render of it say.
    const applied = state.lastSyncedRevision === request.revision && state.renderedDigest === render?.digest;
    const approved = deployed ?? (applied ? undefined : approvedRenderMoved(state, request.revision, render));
    return {
      render,
      deployedMoved: deployed !== undefined,
      ...(approved && render ? { changed: renderChangedReason(request.revision, approved, render) } : {}),
    };
  }

  /**
   * Why the render about to be written at a pinned commit is not the one the pin's rollback entry
   * applied (rendered here when the caller holds none); undefined when it is, or no pin binds it.
   * A render that fails here is left to the write, which renders again and reports it.
   */
  private async pinnedRender(
    request: GateRequest,
    state: EnvironmentState,
    bound: RenderSeen | undefined,
  ): Promise<string | undefined> {
    const pin = request.pin ?? state.pin;
    if (!pin?.renderDigest || pin.revision !== request.revision) return undefined;
    const render =
      request.render ?? bound ?? (await this.o.renderOf?.(request.revision).catch(() => undefined));
    return render ? pinnedRenderRefusal(pin, request.revision, render.digest) : undefined;
  }

  /**
   * A machine's write (the automated pass, self-heal) held by the pin's render: nobody asked, so
   * history, the state's last error and the check run say why, once per revision and reason. A
   * person's request hears it in its answer; a retry's refusal is its release's history entry.
   */
  private async reportPinned(request: GateRequest, state: EnvironmentState, reason: string): Promise<void> {
    if (request.path !== "automated" && request.path !== "selfHeal") return;
    const { revision, trigger, actor } = request;
    if (state.lastError?.revision === revision && state.lastError.message === reason) return;
    const outcome = outcomeWithoutWork(revision, "Error", reason);
    let said = false;
    await this.o.store.update(this.o.instance, (s) => {
      if (s.lastError?.revision === revision && s.lastError.message === reason) return;
      said = true;
      appendHistory(s, historyEntryOf(trigger, actor, outcome), this.o.env.revisionHistoryLimit);
      s.lastError = { revision, message: reason, at: new Date().toISOString() };
      s.syncStatus = "OutOfSync";
    });
    if (!said) return;
    this.o.log.warn({ instance: this.o.instance, revision, path: request.path }, reason);
    this.o.emit({
      type: "refused",
      instance: this.o.instance,
      env: this.o.env.name,
      revision,
      trigger,
      actor,
      outcome,
    });
  }

  private async signatureProblem(sha: string): Promise<string | undefined> {
    const source = this.o.source;
    return source.signatureProblem
      ? source.signatureProblem(sha)
      : `${source.description} cannot tell whether commit ${sha.slice(0, 7)} is signed`;
  }

  private async missingChecks(sha: string, wanted: RequiredCheck[] | true): Promise<string[]> {
    if (!this.o.checks)
      return [
        `${wanted === true ? "the branch's required checks" : wanted.map(checkLabel).join(", ")} (this syncward cannot read checks)`,
      ];
    return this.o.checks.missing(sha, wanted, this.o.env.source.branch);
  }

  private async announceWait(
    request: GateRequest,
    state: EnvironmentState,
    approvals: string[],
    needed: number,
    reason: string,
    render?: RenderSeen,
  ): Promise<void> {
    const { revision, trigger, actor } = request;
    const wait = request.wait as NonNullable<GateRequest["wait"]>;
    const prev = state.pendingSync?.revision === revision ? state.pendingSync : undefined;
    // Who pushed the revision: an approver must not be them (src/github/approve.ts), and without
    // GitHub's repository activity only a push webhook tells. A push that arrives after a poll
    // announced the wait is recorded here, on the next pass it starts.
    const pushed = this.pushers.get(revision) ?? state.recentPushes?.find((p) => p.after === revision);
    const pusher = prev?.pusher ?? pushed?.login;
    const pusherId = prev?.pusher !== undefined ? prev.pusherId : pushed?.id;
    // A wait announced under another configuration is announced again: the approvals given
    // under it no longer count, and approvers are asked anew.
    const config = approvedConfigOf(this.o.env);
    const sameConfig = prev?.config === undefined || prev.config === config;
    // So is a wait whose revision now renders otherwise: approvers are asked for the render they see.
    const sameRender = render === undefined || prev?.render === render.digest;
    if (prev && prev.manual === wait.manual && sameOperation(prev, wait) && sameConfig && sameRender) {
      if (pushed !== undefined && prev.pusher === undefined) await this.recordPusher(pushed);
      return;
    }
    await this.o.store.update(this.o.instance, (s) => {
      s.pendingSync = {
        revision,
        trigger,
        actor,
        requestedAt: new Date().toISOString(),
        ...(pusher === undefined ? {} : { pusher }),
        ...(pusherId === undefined ? {} : { pusherId }),
        ...wait,
        config,
        ...(render ? { render: render.digest } : {}),
        ...(render?.objects ? { renderedObjects: render.objects } : {}),
      };
      s.syncStatus = "OutOfSync";
    });
    this.o.log.info({ instance: this.o.instance, revision, approvals: approvals.length, needed }, reason);
    this.o.emit({
      type: "awaitingApproval",
      instance: this.o.instance,
      env: this.o.env.name,
      revision,
      trigger,
      actor,
      approvals,
      needed,
      reason,
    });
  }

  /**
   * The guards of the config file at `sha`: undefined when that revision has no config file or no
   * such environment (deterministic for a commit, so kept). Fetching the revision failing (GitHub
   * down, a rate limit) throws and is not kept: the gate holds rather than fall back to the
   * current, possibly looser, rules.
   */
  private guardsAt(sha: string | undefined): Promise<Guards | undefined> {
    if (!sha) return Promise.resolve(undefined);
    let found = this.readGuards.get(sha);
    if (!found) {
      found = this.o.source.tree(sha).then(
        (dir) =>
          readFile(join(dir, this.o.configFile ?? ".github/syncward.yml"), "utf8")
            .then((text) => guardsOf(findEnvironment(parseConfig(text), this.o.env.name)))
            .catch((err: unknown) => {
              this.o.log.debug(
                { err: String(err), instance: this.o.instance, revision: sha },
                "the deployed revision declares no such environment; the current rules apply",
              );
              return undefined;
            }),
        (err: unknown) => {
          this.readGuards.delete(sha);
          throw err;
        },
      );
      this.readGuards.set(sha, found);
    }
    return found;
  }
}

/** Two requests to sync one revision do the same thing (what an approval of one of them approved). */
function sameOperation(a: NonNullable<GateRequest["wait"]>, b: NonNullable<GateRequest["wait"]>): boolean {
  return (["prune", "force", "allowEmpty", "confirmPrune"] as const).every(
    (k) => Boolean(a[k]) === Boolean(b[k]),
  );
}
