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

export interface ApproverListing {
  /** `login` is one of the listed users or a member of a listed team. */
  listed: boolean;
  /** The rule lists nobody: whoever has `commands.approve` permission may approve. */
  open: boolean;
  /** Who may approve, for a refusal: `only @carol, @acme/sre may approve`. */
  reason?: string;
  /** Listed teams whose membership could not be read, each with its cause. */
  unreadable?: string[];
}

/**
 * Whether `login` is one of `rule`'s approvers (a listed user or a member of a listed team).
 * Listed approvers need only read permission, like GitHub Environments' reviewers; everyone
 * else needs `commands.approve` (approve.ts decides, with who contributed to the change).
 */
export async function listedApprover(
  gh: Octokit,
  org: string,
  rule: ApprovalRule,
  login: string,
): Promise<ApproverListing> {
  if (rule.users.length === 0 && rule.teams.length === 0) return { listed: false, open: true };
  if (rule.users.some((u) => u.toLowerCase() === login.toLowerCase())) return { listed: true, open: false };
  const unreadable: string[] = [];
  for (const team of rule.teams) {
    const [teamOrg, slug] = team.includes("/") ? (team.split("/", 2) as [string, string]) : [org, team];
    const problem = await teamMembership(gh, teamOrg, slug, login);
    if (problem === "member") return { listed: true, open: false };
    if (problem !== "not a member") unreadable.push(problem);
  }
  const also = unreadable.length > 0 ? ` (and ${unreadable.join("; ")})` : "";
  return {
    listed: false,
    open: false,
    reason: `only ${approverMentions(org, rule).join(", ")} may approve${also}`,
    unreadable,
  };
}

/**
 * The configured approvers as GitHub mentions (`@carol`, `@acme/sre`). The config schema admits
 * only login and `org/slug` characters, and they are checked again here: these are the one
 * place syncward writes a live mention, so nothing else may pass for one.
 */
export function approverMentions(org: string, rule: ApprovalRule): string[] {
  const login = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
  const slug = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
  const out: string[] = [];
  for (const u of rule.users) if (login.test(u)) out.push(`@${u}`);
  for (const t of rule.teams) {
    const [teamOrg, teamSlug] = t.includes("/") ? (t.split("/", 2) as [string, string]) : [org, t];
    if (login.test(teamOrg) && slug.test(teamSlug)) out.push(`@${teamOrg}/${teamSlug}`);
  }
  return out;
}

/**
 * Whether `login` is an active member of team `org/slug`, or why that cannot be told. GitHub
 * answers 404 both for "not a member" and for a team it does not show us, so a 404 is followed by
 * a look at the team itself; a 403 means the installation may not read members.
 */
async function teamMembership(gh: Octokit, org: string, slug: string, login: string): Promise<string> {
  try {
    const { data } = await gh.rest.teams.getMembershipForUserInOrg({ org, team_slug: slug, username: login });
    return data.state === "active" ? "member" : "not a member";
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 403) return forbidden(org, slug);
    if (status !== 404) throw err;
  }
  try {
    await gh.rest.teams.getByName({ org, team_slug: slug });
    return "not a member";
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 403) return forbidden(org, slug);
    if (status === 404)
      return `team ${org}/${slug} does not exist or syncward cannot see it (check the spelling; a team of another organization needs syncward installed there)`;
    throw err;
  }
}

/** The listed teams (`org/slug`, or a slug of `org`) syncward cannot read, each with its cause. */
export async function unreadableTeams(gh: Octokit, org: string, teams: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const team of new Set(teams)) {
    const [teamOrg, slug] = team.includes("/") ? (team.split("/", 2) as [string, string]) : [org, team];
    try {
      await gh.rest.teams.getByName({ org: teamOrg, team_slug: slug });
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 403) out.push(forbidden(teamOrg, slug));
      else if (status === 404)
        out.push(
          `team ${teamOrg}/${slug} does not exist or syncward cannot see it (check the spelling; a team of another organization needs syncward installed there)`,
        );
      else throw err;
    }
  }
  return out;
}

function forbidden(org: string, slug: string): string {
  return `cannot read team ${org}/${slug}: 403; an owner of ${org} must accept syncward's "Members: read" permission`;
}
