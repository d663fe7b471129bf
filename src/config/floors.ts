// Operator floors: settings no repository can lower. applyFloors() takes every source of floors
// (the operator's environment variables, the repository's project) and the stricter wins.
// NOTE (projects, issue 20): minimal version written on branch issue-20; gate-core's fuller
// src/config/floors.ts (issue 15) has the same shape and replaces it at merge.
import type { EnvironmentConfig } from "./types.ts";

export interface Floors {
  /** Approvals every environment marked production needs at least. */
  minProductionApprovals?: number;
  requireSignedCommits?: boolean;
}

export interface FloorSource {
  /** Who set them, for people: "SYNCWARD_MIN_PRODUCTION_APPROVALS", "project team-a". */
  source: string;
  floors: Floors;
}

export function applyFloors(env: EnvironmentConfig, sources: readonly FloorSource[]): EnvironmentConfig {
  let out = env;
  for (const { floors } of sources) {
    if (floors.requireSignedCommits && !out.policy.requireSignedCommits)
      out = { ...out, policy: { ...out.policy, requireSignedCommits: true } };
    const min = floors.minProductionApprovals;
    if (min !== undefined && out.production && (out.approval?.minimum ?? 0) < min)
      out = {
        ...out,
        approval: { users: [], teams: [], allowAuthor: false, ...out.approval, minimum: min },
      };
  }
  return out;
}
