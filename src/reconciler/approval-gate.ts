// Environments with `approval` hold a sync until enough approvers have approved its exact
// revision. The gate records what waits (once per revision) and who approved what; who may
// approve is the GitHub layer's call, made before `record`.
import type { EnvironmentConfig } from "../config/types.ts";
import type { StateStore } from "../state/store.ts";
import type { EnvironmentState, Trigger } from "../state/types.ts";
import type { Logger } from "./environment-controller.ts";
import type { Emit } from "./events.ts";

/** Distinct approvers of `revision` so far; approvals of other revisions do not count. */
export function approversOf(state: EnvironmentState, revision: string): string[] {
  // One person is one GitHub id, whatever logins they approved under; older records have only a login.
  const people = new Map<string, string>();
  for (const a of state.pendingApprovals)
    if (a.sha === revision) people.set(a.id === undefined ? `login:${a.by}` : `id:${a.id}`, a.by);
  return [...new Set(people.values())];
}

export class ApprovalGate {
  constructor(
    private readonly o: {
      env: EnvironmentConfig;
      store: StateStore;
      instance: string;
      emit: Emit;
      log: Logger;
    },
  ) {}

  /**
   * True when the environment needs no approval or `revision` has enough. Otherwise records the
   * held sync (once per revision) and announces that it waits.
   */
  async check(
    revision: string,
    trigger: Trigger,
    actor: string,
    manual: boolean,
    opts: { prune?: boolean; force?: boolean; allowEmpty?: boolean; confirmPrune?: boolean } = {},
  ): Promise<boolean> {
    const rule = this.o.env.approval;
    if (!rule) return true;
    const state = await this.o.store.load(this.o.instance);
    const approvers = approversOf(state, revision);
    if (approvers.length >= rule.minimum) return true;
    // Synced meanwhile (a manual sync from the CLI, say): nothing is waiting any more.
    if (state.lastSyncedRevision === revision) return false;
    if (state.pendingSync?.revision === revision && state.pendingSync.manual === manual) return false;
    await this.o.store.update(this.o.instance, (s) => {
      s.pendingSync = { revision, trigger, actor, requestedAt: new Date().toISOString(), manual, ...opts };
      s.syncStatus = "OutOfSync";
    });
    this.o.log.info(
      { instance: this.o.instance, revision, approvals: approvers.length, needed: rule.minimum },
      "waiting for approval",
    );
    this.o.emit({
      type: "awaitingApproval",
      instance: this.o.instance,
      env: this.o.env.name,
      revision,
      trigger,
      actor,
      approvals: approvers,
      needed: rule.minimum,
    });
    return false;
  }

  /** Records that `by` approved `revision`; `released` when that makes enough approvals. */
  async record(
    revision: string,
    by: string,
    id?: number,
  ): Promise<{ approvers: string[]; needed: number; released: boolean; state: EnvironmentState }> {
    const needed = this.o.env.approval?.minimum ?? 0;
    const state = await this.o.store.update(this.o.instance, (s) => {
      const same = (a: { by: string; id?: number }) => (id === undefined ? a.by === by : a.id === id);
      if (!s.pendingApprovals.some((a) => a.sha === revision && same(a))) {
        s.pendingApprovals.push({
          sha: revision,
          by,
          ...(id === undefined ? {} : { id }),
          at: new Date().toISOString(),
        });
      }
    });
    const approvers = approversOf(state, revision);
    return { approvers, needed, released: approvers.length >= needed, state };
  }
}
