// A revision that changes `.github/syncward.yml` is gated, per environment, by the stricter of the
// rules it was deployed under and the rules it brings: a merge that removes prod's `approval:`
// still waits for an approval under the old rule, and takes effect once deployed. Pure.
import { createHash } from "node:crypto";
import { checkKey, weakenedGuards, weakerDriftPolicy } from "./config-changes.ts";
import {
  type ApprovalRule,
  type CommandPermissions,
  destinationName,
  type EnvironmentConfig,
  type SyncWindow,
} from "./types.ts";

/** The guarding part of an environment's config, kept with the state of what it deployed. */
export interface Guards {
  approval?: ApprovalRule;
  commands: CommandPermissions;
  namespaces: string[];
  clusterResources: Array<{ group: string; kind: string }>;
  requireSignedCommits: boolean;
  production: boolean;
  /** Checks a revision must pass (absent in older states: the current rule applies). */
  requireChecks?: EnvironmentConfig["requireChecks"] | null;
  /** Sync windows (absent in older states: the current ones apply). */
  syncWindows?: SyncWindow[];
  /** Where it deployed to (older states lack it). */
  destination?: EnvironmentConfig["destination"];
  /**
   * Fingerprint of what decides the render besides the commit (the source's path and chart
   * settings, the destination): a change of it re-renders the deployed commit (older states lack it).
   */
  render?: string;
  /** The default-branch commit the config was read at, when known (EnvironmentConfig.configRevision). */
  configRevision?: string;
  /**
   * What decides which live changes stay without a person's yes: trusted managers, ignored
   * differences, self-heal, prune, sync options (older states lack it: the current ones apply).
   */
  driftPolicy?: DriftPolicy;
}

export type DriftPolicy = Pick<EnvironmentConfig, "trustedManagers" | "ignoreDifferences" | "syncPolicy">;

/** Fingerprint of the config that shapes an environment's render of a commit. */
export function renderConfigOf(env: EnvironmentConfig): string {
  return createHash("sha256")
    .update(JSON.stringify({ source: env.source, destination: env.destination }))
    .digest("hex")
    .slice(0, 16);
}

/**
 * Fingerprint of everything an approver judged an environment's release under: its rules and
 * source as configured (not the default-branch commit it was read at, which moves with every
 * unrelated merge). An approval given under another fingerprint no longer counts.
 */
export function approvedConfigOf(env: EnvironmentConfig): string {
  const { configRevision: _, ...judged } = env;
  return createHash("sha256").update(JSON.stringify(judged)).digest("hex").slice(0, 16);
}

/**
 * The deployed commit would render differently under `env` than it did when deployed (a config
 * change, possibly on another branch than the one the environment tracks): for a gated
 * environment that is a new release, not the deployed one.
 */
export function renderConfigMoved(env: EnvironmentConfig, deployed: Guards | undefined): boolean {
  return (
    (deployed?.render !== undefined && deployed.render !== renderConfigOf(env)) ||
    driftLoosened(env, deployed)
  );
}

/**
 * The config lets more live change stay than when the deployed revision was synced (a wider
 * trustedManagers or ignoreDifferences, self-heal or prune off, Replace=true): like a render
 * change, the deployed revision under it is a new release, which a gated environment approves.
 */
export function driftLoosened(env: EnvironmentConfig, deployed: Guards | undefined): boolean {
  if (!deployed?.driftPolicy) return false;
  return weakerDriftPolicy({ ...env, ...deployed.driftPolicy }, env).length > 0;
}

export function guardsOf(env: EnvironmentConfig): Guards {
  return {
    ...(env.approval ? { approval: env.approval } : {}),
    commands: env.commands,
    namespaces: env.policy.namespaces,
    clusterResources: env.policy.clusterResources,
    requireSignedCommits: env.policy.requireSignedCommits,
    production: env.production,
    // null: none required (kept apart from "not recorded", which older states say by absence).
    requireChecks: env.requireChecks ?? null,
    syncWindows: env.syncWindows,
    destination: env.destination,
    render: renderConfigOf(env),
    ...(env.configRevision ? { configRevision: env.configRevision } : {}),
    driftPolicy: {
      trustedManagers: env.trustedManagers,
      ignoreDifferences: env.ignoreDifferences,
      syncPolicy: env.syncPolicy,
    },
  };
}

/** `env` with `guards` in place of its own. */
export function withGuards(env: EnvironmentConfig, guards: Guards): EnvironmentConfig {
  const { approval: _, requireChecks: __, ...rest } = env;
  const checks = guards.requireChecks === undefined ? env.requireChecks : (guards.requireChecks ?? undefined);
  return {
    ...rest,
    ...(checks === undefined ? {} : { requireChecks: checks }),
    syncWindows: guards.syncWindows ?? env.syncWindows,
    ...(guards.approval ? { approval: guards.approval } : {}),
    commands: guards.commands,
    policy: {
      ...env.policy,
      namespaces: guards.namespaces,
      clusterResources: guards.clusterResources,
      requireSignedCommits: guards.requireSignedCommits,
    },
    production: guards.production,
    ...(guards.destination ? { destination: guards.destination } : {}),
    ...(guards.driftPolicy ?? {}),
  };
}

const RANK = { read: 1, triage: 2, write: 3, maintain: 4, admin: 5 } as const;

const both = <T>(a: T[], b: T[], key: (x: T) => string = String) =>
  a.filter((x) => b.some((y) => key(y) === key(x)));

/** The stricter of two approval rules: more approvals, approvers listed in both (else the old ones), shorter expiry. */
export function stricterApproval(old?: ApprovalRule, now?: ApprovalRule): ApprovalRule | undefined {
  if (!old || !now) return old ?? now;
  const users = both(now.users, old.users, (u) => u.toLowerCase());
  const teams = both(now.teams, old.teams, (t) => t.toLowerCase());
  const kept = users.length + teams.length > 0;
  const expiries = [old.expiresAfter, now.expiresAfter].filter((e): e is number => e !== undefined);
  return {
    users: kept ? users : old.users,
    teams: kept ? teams : old.teams,
    minimum: Math.max(old.minimum, now.minimum),
    allowAuthor: old.allowAuthor && now.allowAuthor,
    // Rules stored before trustedBots existed trust no bot.
    trustedBots: both(now.trustedBots ?? [], old.trustedBots ?? [], (b) => b.toLowerCase()),
    ...(expiries.length > 0 ? { expiresAfter: Math.min(...expiries) } : {}),
  };
}

/**
 * The rules a revision of `current` is gated by when the deployed revision ran under `deployed`:
 * `current` itself unless it weakens a guard, else the stricter of both, and `weakens` says what.
 * Namespaces and cluster kinds the change widens: an approval-gated environment takes them with
 * the approval; one gated by nothing keeps the old lists until the change is deployed.
 */
export function stricterRules(
  current: EnvironmentConfig,
  deployed: Guards | undefined,
): { rules: EnvironmentConfig; weakens: string[] } {
  if (!deployed) return { rules: current, weakens: [] };
  const old = withGuards(current, deployed);
  const weakens = weakenedGuards(old, current);
  if (weakens.length === 0) return { rules: current, weakens };
  const approval = stricterApproval(deployed.approval, current.approval);
  const kindKey = (k: { group: string; kind: string }) => `${k.group}/${k.kind}`;
  const commands = stricterCommands(deployed.commands, current.commands);
  const rules = withGuards(current, {
    ...(approval ? { approval } : {}),
    commands,
    namespaces: approval ? current.policy.namespaces : both(current.policy.namespaces, deployed.namespaces),
    clusterResources: approval
      ? current.policy.clusterResources
      : both(current.policy.clusterResources, deployed.clusterResources, kindKey),
    requireSignedCommits: deployed.requireSignedCommits || current.policy.requireSignedCommits,
    production: deployed.production || current.production,
    requireChecks: stricterChecks(old.requireChecks, current.requireChecks) ?? null,
    syncWindows: stricterWindows(old.syncWindows, current.syncWindows),
  });
  return { rules, weakens };
}

/** Each command at the higher of the two permissions it needs. */
function stricterCommands(old: CommandPermissions, now: CommandPermissions): CommandPermissions {
  return Object.fromEntries(
    Object.entries(now).map(([name, level]) => {
      const current = level as keyof typeof RANK;
      const was = (old[name as keyof CommandPermissions] ?? current) as keyof typeof RANK;
      return [name, RANK[was] > RANK[current] ? was : current];
    }),
  ) as unknown as CommandPermissions;
}

/**
 * Both lists' checks; where one is `true` (the branch's required checks) and the other a list,
 * which is stricter cannot be told, and the deployed rule stays.
 */
export function stricterChecks(
  old: EnvironmentConfig["requireChecks"],
  now: EnvironmentConfig["requireChecks"],
): EnvironmentConfig["requireChecks"] {
  if (old === undefined || now === undefined) return old ?? now;
  if (old === true || now === true) return old;
  return [...old, ...now.filter((c) => !old.some((o) => checkKey(o) === checkKey(c)))];
}

/**
 * Every deny window of either; the deployed allow windows when it had any (a list of allow
 * windows means "inside any of them", so two lists cannot be intersected), else the new ones.
 */
export function stricterWindows(old: SyncWindow[], now: SyncWindow[]): SyncWindow[] {
  const key = (w: SyncWindow) => JSON.stringify(w);
  const deny = [...old, ...now].filter((w) => w.kind === "deny");
  const allowOld = old.filter((w) => w.kind === "allow");
  const allow = allowOld.length > 0 ? allowOld : now.filter((w) => w.kind === "allow");
  return [...allow, ...deny].filter((w, i, all) => all.findIndex((x) => key(x) === key(w)) === i);
}

/** Namespaces an environment may write: its destination's and those its policy allows. */
export function writableNamespaces(
  destination: { namespace: string } | undefined,
  namespaces: string[],
): string[] {
  return [...new Set([...(destination ? [destination.namespace] : []), ...namespaces])];
}

/**
 * What `env` could write of the gated environment that deployed under `other` (same cluster as far
 * as the destination tells: context and inCluster; a cluster reached under two context names is
 * not recognised): the namespaces and cluster-scoped kinds both may write. Empty: nothing shared.
 */
export function sharedWith(env: EnvironmentConfig, other: Guards): string[] {
  const there = other.destination;
  if (
    there !== undefined &&
    ((destinationName(there) ?? "") !== (destinationName(env.destination) ?? "") ||
      Boolean(there.inCluster) !== Boolean(env.destination.inCluster))
  )
    return [];
  const theirs = writableNamespaces(there, other.namespaces);
  const namespaces = writableNamespaces(env.destination, env.policy.namespaces).filter((n) =>
    theirs.includes(n),
  );
  const kindKey = (k: { group: string; kind: string }) => `${k.group}/${k.kind}`;
  const kinds = env.policy.clusterResources
    .map(kindKey)
    .filter((k) => other.clusterResources.some((o) => kindKey(o) === k));
  return [...namespaces.map((n) => `namespace ${n}`), ...kinds.map((k) => `cluster-scoped ${k}`)];
}

/**
 * `rules` held to the guards of a gated environment whose objects it could write (see sharedWith):
 * its approval (the stricter of both), command permissions, signatures, required checks and
 * windows. Its own destination and allowed namespaces stay: they say where it deploys.
 */
export function inheritGuards(
  current: { rules: EnvironmentConfig; weakens: string[] },
  name: string,
  other: Guards,
  shared: string[],
): { rules: EnvironmentConfig; weakens: string[] } {
  const rules = current.rules;
  const held = heldTo(rules, other);
  // Nothing stricter to take (a renamed prod under prod's own rules): the rules as they were.
  if (canonical(guardsOf(held)) === canonical(guardsOf(rules))) return current;
  return {
    rules: held,
    weakens: [
      ...current.weakens,
      `may write ${shared.join(", ")} of gated environment ${name}: held to its rules`,
    ],
  };
}

/** JSON with object keys sorted, so two equal rules compare equal whatever order they were built in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

function heldTo(rules: EnvironmentConfig, other: Guards): EnvironmentConfig {
  const approval = stricterApproval(other.approval, rules.approval);
  const commands = stricterCommands(other.commands, rules.commands);
  const checks = stricterChecks(other.requireChecks ?? undefined, rules.requireChecks);
  const { approval: _, requireChecks: __, ...rest } = rules;
  return {
    ...rest,
    ...(approval ? { approval } : {}),
    ...(checks === undefined ? {} : { requireChecks: checks }),
    commands,
    syncWindows: stricterWindows(other.syncWindows ?? [], rules.syncWindows),
    policy: {
      ...rules.policy,
      requireSignedCommits: rules.policy.requireSignedCommits || other.requireSignedCommits,
    },
    production: rules.production || other.production,
  };
}
