// Floors an operator sets outside any repository (environment variables, the repository's project):
// a repository's config can raise them, never lower them. Several sources: the stricter wins. Pure.
//
// Which environments are production is the operator's word as well as the repository's: a floor
// applies to every environment whose destination the operator marks production (`production`
// below), whatever the repository's `production:` says, and to those the repository marks itself.
// On such an environment the floor holds, whatever approval.allowAuthor or commands.approve say:
// a minimum of distinct approvers, no author or contributor of what is deployed approving, and an
// approver permission of at least write (listed approvers too).
import type { EnvironmentConfig, OperatorFloor, RequiredCheck } from "./types.ts";

export interface Floor {
  /** Where it comes from, for messages: "SYNCWARD_MIN_PRODUCTION_APPROVALS", "project payments". */
  source: string;
  /** Approvals every production environment needs at least. */
  minProductionApprovals?: number;
  /** Every commit deployed must carry a signature GitHub shows as Verified. */
  requireSignedCommits?: boolean;
  /** Checks that must have passed on a production revision, on top of the repository's. */
  requiredChecks?: RequiredCheck[];
  /** Least repository permission of a production approver (default write when a floor applies). */
  approverPermission?: OperatorFloor["approverPermission"];
}

const RANK = { read: 1, triage: 2, write: 3, maintain: 4, admin: 5 } as const;
type Level = keyof typeof RANK;
const higher = <T extends Level>(a: T, b: T): T => (RANK[a] >= RANK[b] ? a : b);

/**
 * `env` raised to every floor in `floors`. `production`: the operator marks the environment's
 * destination production (narrow.ts); the repository's own `production: true` counts as well.
 */
export function applyFloors(
  env: EnvironmentConfig,
  floors: readonly Floor[],
  production = false,
): EnvironmentConfig {
  let out = env;
  if (floors.some((f) => f.requireSignedCommits) && !out.policy.requireSignedCommits)
    out = { ...out, policy: { ...out.policy, requireSignedCommits: true } };
  const isProduction = production || env.production;
  const binding = isProduction ? floors.filter(productionFloor) : [];
  if (binding.length === 0) return out;
  const min = Math.max(0, ...binding.map((f) => f.minProductionApprovals ?? 0));
  return productionFloorOn(out, binding, min, production);
}

/** A floor that holds a production environment (an approval minimum, checks or a permission). */
function productionFloor(f: Floor): boolean {
  return (
    (f.minProductionApprovals ?? 0) > 0 ||
    (f.requiredChecks?.length ?? 0) > 0 ||
    f.approverPermission !== undefined
  );
}

/** The production floor itself: approvals, no self-approval, approver permission, checks. */
function productionFloorOn(
  env: EnvironmentConfig,
  binding: readonly Floor[],
  min: number,
  operatorProduction: boolean,
): EnvironmentConfig {
  // Applied once per source (the project's when narrowed, the installation's when loaded): kept.
  const permission = binding.reduce<OperatorFloor["approverPermission"]>(
    (p, f) => higher(p, f.approverPermission ?? "write"),
    env.floor?.approverPermission ?? "write",
  );
  const sources = [...new Set([...(env.floor?.sources ?? []), ...binding.map((f) => f.source)])];
  const approve = higher(env.commands.approve as Level, permission);
  const checks = binding.flatMap((f) => f.requiredChecks ?? []);
  return {
    ...env,
    // GitHub's deployment is a production one too: the operator said so.
    production: env.production || operatorProduction,
    // A floor of checks alone gates nothing by approval; any approval there is held to the floor.
    ...(min > 0 || env.approval
      ? {
          approval: {
            users: env.approval?.users ?? [],
            teams: env.approval?.teams ?? [],
            // Nobody who contributed approves, whatever the repository's allowAuthor says.
            allowAuthor: false,
            trustedBots: env.approval?.trustedBots ?? [],
            ...(env.approval?.expiresAfter !== undefined ? { expiresAfter: env.approval.expiresAfter } : {}),
            minimum: Math.max(min, env.approval?.minimum ?? 0, 1),
          },
        }
      : {}),
    commands: { ...env.commands, approve },
    ...withChecks(env.requireChecks, checks),
    floor: { sources, approverPermission: permission },
  };
}

/** The repository's required checks with the floor's added (`true`, the branch's, stays: see docs). */
function withChecks(
  own: EnvironmentConfig["requireChecks"],
  floor: readonly RequiredCheck[],
): Pick<EnvironmentConfig, "requireChecks"> | Record<string, never> {
  if (floor.length === 0) return {};
  if (own === true) return { requireChecks: true };
  const key = (c: RequiredCheck) => (typeof c === "string" ? c : `${c.app}/${c.name}`);
  const seen = new Set((own ?? []).map(key));
  return { requireChecks: [...(own ?? []), ...floor.filter((c) => !seen.has(key(c)))] };
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
