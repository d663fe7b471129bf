// Floors an operator sets outside any repository (environment variables, the repository's project):
// a repository's config can raise them, never lower them. Several sources: the stricter wins. Pure.
import type { EnvironmentConfig } from "./types.ts";

export interface Floor {
  /** Where it comes from, for messages: "SYNCWARD_MIN_PRODUCTION_APPROVALS", "project payments". */
  source: string;
  /** Approvals every environment marked `production: true` needs at least. */
  minProductionApprovals?: number;
  /** Every commit deployed must carry a signature GitHub shows as Verified. */
  requireSignedCommits?: boolean;
}

/** `env` raised to every floor in `floors`. */
export function applyFloors(env: EnvironmentConfig, floors: readonly Floor[]): EnvironmentConfig {
  let out = env;
  if (floors.some((f) => f.requireSignedCommits) && !out.policy.requireSignedCommits)
    out = { ...out, policy: { ...out.policy, requireSignedCommits: true } };
  const min = Math.max(0, ...floors.map((f) => (env.production ? (f.minProductionApprovals ?? 0) : 0)));
  if (min === 0 || (out.approval?.minimum ?? 0) >= min) return out;
  return {
    ...out,
    approval: {
      users: out.approval?.users ?? [],
      teams: out.approval?.teams ?? [],
      allowAuthor: out.approval?.allowAuthor ?? false,
      trustedBots: out.approval?.trustedBots ?? [],
      ...(out.approval?.expiresAfter !== undefined ? { expiresAfter: out.approval.expiresAfter } : {}),
      minimum: min,
    },
  };
}

/**
 * The operator's floors from the environment: SYNCWARD_MIN_PRODUCTION_APPROVALS (default 0).
 * @throws Error naming the variable when its value is not a whole number from 0 to 100.
 */
export function floorsFromEnv(vars: NodeJS.ProcessEnv = process.env): Floor[] {
  const name = "SYNCWARD_MIN_PRODUCTION_APPROVALS";
  const raw = vars[name]?.trim();
  if (!raw) return [];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 100)
    throw new Error(`${name} must be a whole number from 0 to 100, got ${JSON.stringify(raw)}`);
  return [{ source: name, minProductionApprovals: n }];
}
