// Floors an operator sets outside any repository (environment variables; a project, see the
// projects issue, is another source): a repository's config can raise them, never lower them.
// Several sources: the stricter wins. Pure.
import type { EnvironmentConfig } from "./types.ts";

export interface Floor {
  /** Where it comes from, for messages: "SYNCWARD_MIN_PRODUCTION_APPROVALS", "project payments". */
  source: string;
  /** Approvals every environment marked `production: true` needs at least. */
  minProductionApprovals?: number;
}

/** `env` raised to every floor in `floors`. */
export function applyFloors(env: EnvironmentConfig, floors: readonly Floor[]): EnvironmentConfig {
  const min = Math.max(0, ...floors.map((f) => (env.production ? (f.minProductionApprovals ?? 0) : 0)));
  if (min === 0 || (env.approval?.minimum ?? 0) >= min) return env;
  return {
    ...env,
    approval: {
      users: env.approval?.users ?? [],
      teams: env.approval?.teams ?? [],
      allowAuthor: env.approval?.allowAuthor ?? false,
      ...(env.approval?.expiresAfter !== undefined ? { expiresAfter: env.approval.expiresAfter } : {}),
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
