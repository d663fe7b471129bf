// Who may do what. Permissions come from GitHub's collaborator permission API, never from
// `author_association` (which describes the association, not what the person may do).
import type { ApprovalRule } from "../config/types.ts";
import type { Octokit, RepoRef } from "./octokit.ts";

export type Permission = "none" | "read" | "triage" | "write" | "maintain" | "admin";
const RANK: Record<Permission, number> = { none: 0, read: 1, triage: 2, write: 3, maintain: 4, admin: 5 };

export function allows(have: Permission, need: Permission): boolean {
  return RANK[have] >= RANK[need];
}

/** A collaborator's effective permission; custom roles map to the base role GitHub reports. */
export async function permissionOf(gh: Octokit, repo: RepoRef, username: string): Promise<Permission> {
  try {
    const { data } = await gh.rest.repos.getCollaboratorPermissionLevel({ ...repo, username });
    const role = (data.role_name ?? "") as Permission;
    // `permission` is the legacy base role (admin|write|read|none); role_name distinguishes maintain/triage.
    return role in RANK ? role : ((data.permission as Permission) ?? "none");
  } catch (err) {
    if ((err as { status?: number }).status === 404) return "none";
    throw err;
  }
}

export interface ApprovalCheck {
  ok: boolean;
  reason?: string;
}

/** May `login` approve a change authored by `author` under `rule`? Pure except team membership. */
export async function checkApprover(
  gh: Octokit,
  org: string,
  rule: ApprovalRule,
  login: string,
  author: string | undefined,
  isBot: boolean,
): Promise<ApprovalCheck> {
  if (isBot || login.endsWith("[bot]")) return { ok: false, reason: "bots never approve deployments" };
  if (author && login.toLowerCase() === author.toLowerCase() && !rule.allowAuthor) {
    return {
      ok: false,
      reason: "the author of a change cannot approve its deployment (approval.allowAuthor is false)",
    };
  }
  if (rule.users.length === 0 && rule.teams.length === 0) return { ok: true };
  if (rule.users.some((u) => u.toLowerCase() === login.toLowerCase())) return { ok: true };
  for (const team of rule.teams) {
    const [teamOrg, slug] = team.includes("/") ? (team.split("/", 2) as [string, string]) : [org, team];
    try {
      const { data } = await gh.rest.teams.getMembershipForUserInOrg({
        org: teamOrg,
        team_slug: slug,
        username: login,
      });
      if (data.state === "active") return { ok: true };
    } catch (err) {
      if ((err as { status?: number }).status !== 404) throw err;
    }
  }
  const who = [
    ...rule.users.map((u) => `@${u}`),
    ...rule.teams.map((t) => `@${t.includes("/") ? t : `${org}/${t}`}`),
  ];
  return { ok: false, reason: `only ${who.join(", ")} may approve` };
}
