// The policy in force for an environment: the configured one, a runtime override (`app set`), or
// a freeze, which turns everything automatic off until unfrozen.
import type { EnvironmentConfig } from "../config/types.ts";
import type { EnvironmentState } from "../state/types.ts";

export interface EffectivePolicy {
  automated: boolean;
  prune: boolean;
  selfHeal: boolean;
  allowEmpty: boolean;
  source: "config" | "override" | "freeze";
  /** As `argocd app get` prints it: `Automated (Prune, SelfHeal)`, `<none>`, `Frozen by alice since ... (reason)`. */
  label: string;
}

function automatedLabel(prune: boolean, selfHeal: boolean): string {
  const flags = [prune ? "Prune" : "", selfHeal ? "SelfHeal" : ""].filter(Boolean);
  return flags.length > 0 ? `Automated (${flags.join(", ")})` : "Automated";
}

export function effectivePolicy(
  env: EnvironmentConfig,
  state: Pick<EnvironmentState, "freeze" | "policyOverride">,
): EffectivePolicy {
  const allowEmpty = env.syncPolicy.automated?.allowEmpty ?? false;
  if (state.freeze) {
    const f = state.freeze;
    return {
      automated: false,
      prune: false,
      selfHeal: false,
      allowEmpty,
      source: "freeze",
      label: `Frozen by ${f.by} since ${f.at}${f.reason ? ` (${f.reason})` : ""}`,
    };
  }
  if (state.policyOverride) {
    const o = state.policyOverride;
    return {
      automated: o.automated,
      prune: o.automated && o.prune,
      selfHeal: o.automated && o.selfHeal,
      allowEmpty,
      source: "override",
      label: `${o.automated ? automatedLabel(o.prune, o.selfHeal) : "<none>"} (set by ${o.by} at ${o.at})`,
    };
  }
  // automated.enabled: false keeps the settings written down but syncs manually only (Argo CD).
  const a = env.syncPolicy.automated?.enabled === false ? undefined : env.syncPolicy.automated;
  return {
    automated: Boolean(a),
    prune: a?.prune ?? false,
    selfHeal: a?.selfHeal ?? false,
    allowEmpty,
    source: "config",
    label: a ? automatedLabel(a.prune, a.selfHeal) : "<none>",
  };
}
