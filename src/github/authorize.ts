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
  /** The approver is one of the listed users (by GitHub id) or a member of a listed team. */
  listed: boolean;
  /** The approval.users entry they are listed as (not through a team). */
  byLogin?: string;
  /** Listed under a login they no longer use (same GitHub id, renamed): the config should say the new one. */
  listedAs?: string;
  /** The rule lists nobody: whoever has `commands.approve` permission may approve. */
  open: boolean;
  /** Who may approve, for a refusal: `only @carol, @acme/sre may approve`. */
  reason?: string;
  /** Listed teams whose membership could not be read, each with its cause. */
  unreadable?: string[];
  /** Their account was found to be a collaborator just now, when its login was pinned. */
  collaborator?: boolean;
}

/**
 * The GitHub account each listed login stood for when syncward first needed it, pinned in the
 * environment's state: a login can be renamed and registered again by someone else, an id cannot.
 */
export interface ApproverPins {
  /** The ids pinned so far, by lowercased login (read from the state when first asked). */
  all(): Promise<Map<string, number>>;
  /** Pins `login` to `id`, once: a pin is never replaced by a later lookup. Resolves with the pin kept. */
  pin(login: string, id: number): Promise<number>;
}

/** The id of the account that has `login` now, or undefined when GitHub knows no such user (404). */
export async function accountIdOf(gh: Octokit, login: string): Promise<number | undefined> {
  try {
    return (await gh.rest.users.getByUsername({ username: login })).data.id;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw err;
  }
}

/**
 * Whether `login` is a collaborator of the repository (GitHub answers 204), not merely someone
 * who can read it: on a public repository everyone can, so read permission alone binds nobody.
 */
export async function isCollaborator(gh: Octokit, repo: RepoRef, login: string): Promise<boolean> {
  try {
    await gh.rest.repos.checkCollaborator({ ...repo, username: login });
    return true;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return false;
    throw err;
  }
}

/** Why a listed login approves nothing while its account is no collaborator. */
export function notCollaborator(login: string, repo: RepoRef): string {
  return `@${login} is listed as an approver but is not a collaborator of ${repo.owner}/${repo.repo} (on a public repository anyone can read it; a listed approver must be given access to the repository)`;
}

/** Why a listed login matches nobody: no account has it (renamed or deleted). */
export function unknownLogin(login: string): string {
  return `@${login} is listed as an approver but GitHub knows no account by that login (renamed or deleted?); update approval.users`;
}

/**
 * Whether `who` is one of `rule`'s approvers: a listed user, by the GitHub id the listed login was
 * pinned to (resolved with GET /users/{login} the first time it is needed), or a member of a
 * listed team (GitHub's membership of the account that has the login now, so id-bound too).
 * Listed approvers need only read permission, like GitHub Environments' reviewers; everyone
 * else needs `commands.approve` (approve.ts decides, with who contributed to the change).
 */
export async function listedApprover(
  gh: Octokit,
  repo: RepoRef,
  rule: ApprovalRule,
  who: { login: string; id: number },
  pins: ApproverPins,
): Promise<ApproverListing> {
  if (rule.users.length === 0 && rule.teams.length === 0) return { listed: false, open: true };
  const org = repo.owner;
  const login = who.login;
  let mismatch: string | undefined;
  const byLogin = rule.users.find((u) => u.toLowerCase() === login.toLowerCase());
  if (byLogin !== undefined) {
    let id = (await pins.all()).get(byLogin.toLowerCase());
    let collaborator = false;
    if (id === undefined) {
      const found = await accountIdOf(gh, byLogin);
      // Pinned only to a collaborator: anyone can register a free login, and a pin to a
      // stranger's account would lock the listed approver out once they are given access.
      collaborator = found !== undefined && (await isCollaborator(gh, repo, byLogin));
      if (found !== undefined && collaborator) id = await pins.pin(byLogin, found);
      else if (found !== undefined) mismatch = notCollaborator(byLogin, repo);
    }
    if (id !== undefined && id === who.id)
      return { listed: true, open: false, byLogin, ...(collaborator ? { collaborator } : {}) };
    // The listed login now belongs to another account: whoever registered it after a rename.
    mismatch ??=
      id === undefined
        ? unknownLogin(byLogin)
        : `@${byLogin} is listed as an approver but is now a different GitHub account (id ${who.id}; the listed one is id ${id}); update approval.users`;
  }
  const unreadable: string[] = [];
  for (const team of rule.teams) {
    const [teamOrg, slug] = team.includes("/") ? (team.split("/", 2) as [string, string]) : [org, team];
    const problem = await teamMembership(gh, teamOrg, slug, login);
    if (problem === "member") return { listed: true, open: false };
    if (problem !== "not a member") unreadable.push(problem);
  }
  // The same account under a new login (renamed since it was pinned) is the same person.
  const renamed = await renamedFrom(rule, who.id, pins);
  if (renamed !== undefined) return { listed: true, open: false, listedAs: renamed, byLogin: renamed };
  const also = unreadable.length > 0 ? ` (and ${unreadable.join("; ")})` : "";
  return {
    listed: false,
    open: false,
    reason: mismatch
      ? `${mismatch}${also}`
      : `only ${approverMentions(org, rule).join(", ")} may approve${also}`,
    unreadable,
  };
}

/**
 * The listed login that was pinned to `id` before its owner renamed the account: the same person.
 * Without the pins (the state cannot be read) nobody is recognized this way, and they are refused
 * as not listed, which is the safe side.
 */
async function renamedFrom(rule: ApprovalRule, id: number, pins: ApproverPins): Promise<string | undefined> {
  if (rule.users.length === 0) return undefined;
  const pinned = await pins.all().catch(() => new Map<string, number>());
  return rule.users.find((u) => pinned.get(u.toLowerCase()) === id);
}

/** The listed users (added by a config change) GitHub knows no account for, or who are no collaborators, each with why. */
export async function unknownUsers(gh: Octokit, users: readonly string[], repo: RepoRef): Promise<string[]> {
  const out: string[] = [];
  for (const login of new Set(users))
    if ((await accountIdOf(gh, login)) === undefined) out.push(unknownLogin(login));
    else if (!(await isCollaborator(gh, repo, login))) out.push(notCollaborator(login, repo));
  return out;
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
