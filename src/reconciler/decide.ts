// What one pass of an environment does next, decided from what it has read: the policy in force,
// the state, the branch head and (once assessed) what differs in the cluster. Pure: the
// environment controller reads, asks this, and does what it says; every write then asks the gate.
import type { EnvironmentState } from "../state/types.ts";
import type { EffectivePolicy } from "./policy.ts";

export interface PassInput {
  policy: Pick<EffectivePolicy, "automated" | "selfHeal" | "source" | "label">;
  state: Pick<EnvironmentState, "lastSyncedRevision" | "stuck" | "syncStatus" | "renderedDigest">;
  head: string;
  /** Digest of the head's render. */
  digest: string;
  /** The environment asks for approval of new revisions. */
  gated: boolean;
  /**
   * A gated environment's deployed revision renders otherwise than what was applied (a remote
   * input, a chart's version): a new release, synced through the gate (which waits for approval),
   * never healed.
   */
  renderMoved?: boolean;
  /** Counts from assessing the head against the cluster; undefined until assessed. */
  assessed?: { drifted: number; extra: number };
  /** Why self-heal must wait now (a deny window with selfHeal: false), if it must. */
  healHeld?: string;
}

export type PassAction =
  /** The head renders what is deployed: record it as deployed, asking nobody. */
  | { kind: "noChange" }
  /** Sync the head (the gate decides whether it may). */
  | { kind: "sync" }
  /** Compare the head with the cluster, then decide again. */
  | { kind: "assess" }
  /** Nothing differs; `markSynced` when the state does not say so yet. */
  | { kind: "inSync"; markSynced: boolean }
  /** Re-apply the drifted objects of the deployed revision (the gate decides whether it may). */
  | { kind: "heal" }
  /** Leave the difference and say why. */
  | { kind: "outOfSync"; reason: string };

export function nextAction(input: PassInput): PassAction {
  const { policy, state, head } = input;
  const deployed = head === state.lastSyncedRevision;
  if (policy.automated && (!deployed || input.renderMoved) && state.stuck?.revision !== head) {
    if (deployed) return { kind: "sync" };
    const same = state.renderedDigest !== undefined && state.renderedDigest === input.digest;
    return same && input.gated ? { kind: "noChange" } : { kind: "sync" };
  }
  if (!input.assessed) return { kind: "assess" };
  const { drifted, extra } = input.assessed;
  if (drifted === 0 && extra === 0)
    return { kind: "inSync", markSynced: deployed && state.syncStatus !== "Synced" };
  if (policy.selfHeal && deployed && drifted > 0 && !input.healHeld) return { kind: "heal" };
  const reason =
    policy.source === "freeze"
      ? `${policy.label}: drift is left alone until unfrozen`
      : !policy.automated
        ? "manual sync policy: waiting for a sync"
        : state.stuck?.revision === head
          ? `stuck: ${state.stuck.reason}`
          : input.healHeld && policy.selfHeal
            ? `self-heal held: ${input.healHeld}`
            : "drift detected; self-heal is off";
  return { kind: "outOfSync", reason };
}
