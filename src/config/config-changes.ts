// What a change of `.github/syncward.yml` would do, per environment, in words a reviewer reads
// before merging: which fields change (old -> new) and which changes weaken a guard (approval,
// production, allowed namespaces and kinds, command permissions, signatures). Pure.
import {
  destinationName,
  type EnvironmentConfig,
  type RequiredCheck,
  type SyncOptions,
  type SyncWindow,
  type SyncwardConfig,
} from "./types.ts";

export interface EnvironmentChange {
  env: string;
  kind: "added" | "removed" | "changed";
  /** `field: old -> new`, one per changed field (for "added", the new environment's outline). */
  fields: string[];
  /** Changes that loosen a guard; reviewers should look twice. */
  weakens: string[];
  /** It now writes where a production or gated environment deploys: its loosening is that one's. */
  intoGuarded?: string[];
}

/** The fields a reviewer cares about, in the order they are listed. */
const FIELDS = [
  "source",
  "destination",
  "production",
  "syncPolicy",
  "approval",
  "commands",
  "policy",
  "syncWindows",
  "requireChecks",
  "ignoreDifferences",
  "trustedManagers",
  "previews",
  "environmentUrl",
  "pollInterval",
  "revisionHistoryLimit",
] as const satisfies ReadonlyArray<keyof EnvironmentConfig>;

const MAX_VALUE_CHARS = 120;

function show(value: unknown): string {
  if (value === undefined) return "(unset)";
  const text = JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

const RANK = { none: 0, read: 1, triage: 2, write: 3, maintain: 4, admin: 5 } as const;

/** Guards that `after` loosens compared with `before`. */
export function weakenedGuards(before: EnvironmentConfig, after: EnvironmentConfig): string[] {
  const out: string[] = [];
  const gated = Boolean(before.approval);
  if (before.approval && !after.approval) out.push("approval removed: syncs no longer wait for /approve");
  if (before.approval && after.approval) {
    if (after.approval.minimum < before.approval.minimum)
      out.push(`approval.minimum lowered from ${before.approval.minimum} to ${after.approval.minimum}`);
    const added = [
      ...after.approval.users.filter((u) => !before.approval?.users.includes(u)),
      ...after.approval.teams.filter((t) => !before.approval?.teams.includes(t)),
    ];
    if (added.length > 0) out.push(`approvers added: ${added.join(", ")}`);
    if (after.approval.allowAuthor && !before.approval.allowAuthor)
      out.push("approval.allowAuthor turned on: authors may approve their own change");
    const listed = (a: NonNullable<EnvironmentConfig["approval"]>) => a.users.length + a.teams.length;
    if (listed(before.approval) > 0 && listed(after.approval) === 0)
      out.push("approvers emptied: anyone with the approve permission may approve");
    const bots = (after.approval.trustedBots ?? []).filter(
      (b) => !(before.approval?.trustedBots ?? []).some((o) => o.toLowerCase() === b.toLowerCase()),
    );
    if (bots.length > 0) out.push(`trusted bots added: ${bots.join(", ")}`);
    const was = before.approval.expiresAfter;
    const now = after.approval.expiresAfter;
    if (was !== undefined && (now === undefined || now > was))
      out.push(
        now === undefined
          ? "approval.expiresAfter removed: approvals never lapse"
          : "approval.expiresAfter raised",
      );
  }
  out.push(...weakerChecks(before.requireChecks, after.requireChecks));
  out.push(...weakerWindows(before.syncWindows, after.syncWindows));
  if (before.production && !after.production) out.push("no longer marked production");
  // Previews of a guarded environment are opt-in: they dry-run pull requests against its cluster.
  if ((before.production || gated) && before.previews !== true && after.previews === true)
    out.push("previews turned on: pull requests are dry-run against this environment's cluster");
  if (!before.syncPolicy.automated && after.syncPolicy.automated && (before.production || gated))
    out.push("automated sync turned on");
  if (after.syncPolicy.automated?.allowEmpty && !before.syncPolicy.automated?.allowEmpty)
    out.push("allowEmpty turned on: an empty render may delete every object");
  const newNamespaces = after.policy.namespaces.filter((n) => !before.policy.namespaces.includes(n));
  if (newNamespaces.length > 0) out.push(`namespaces allowed: ${newNamespaces.join(", ")}`);
  const kinds = (c: EnvironmentConfig) => c.policy.clusterResources.map((k) => `${k.group}/${k.kind}`);
  const newKinds = kinds(after).filter((k) => !kinds(before).includes(k));
  if (newKinds.length > 0) out.push(`cluster-scoped kinds allowed: ${newKinds.join(", ")}`);
  if (before.policy.requireSignedCommits && !after.policy.requireSignedCommits)
    out.push("requireSignedCommits turned off");
  for (const [command, level] of Object.entries(after.commands)) {
    const was = before.commands[command as keyof EnvironmentConfig["commands"]];
    if (RANK[level as keyof typeof RANK] < RANK[was as keyof typeof RANK])
      out.push(`/${command} now needs ${level} permission (was ${was})`);
  }
  out.push(...weakerDriftPolicy(before, after));
  if (before.destination.namespace !== after.destination.namespace)
    out.push(`destination namespace moves to ${after.destination.namespace}`);
  if (
    (destinationName(before.destination) ?? "") !== (destinationName(after.destination) ?? "") ||
    Boolean(before.destination.inCluster) !== Boolean(after.destination.inCluster)
  )
    out.push("destination cluster changes");
  return out;
}

const SYNC_OPTION_LOOSENINGS: Array<[keyof SyncOptions, boolean, string]> = [
  [
    "Replace",
    true,
    "Replace=true turned on: objects are replaced whole (kubectl replace/create), not applied",
  ],
  [
    "RespectIgnoreDifferences",
    true,
    "RespectIgnoreDifferences=true turned on: a sync keeps live values of ignored fields",
  ],
  ["Validate", false, "Validate=false: fields the API server does not know are no longer refused"],
];

/**
 * What lets more change in the cluster stay without a person's yes: trusting more field managers or
 * paths, ignoring more differences, turning off self-heal or prune, replacing instead of applying,
 * forcing. Each entry a reviewer can read on its own line.
 */
export function weakerDriftPolicy(before: EnvironmentConfig, after: EnvironmentConfig): string[] {
  const out: string[] = [];
  const key = (x: unknown) => JSON.stringify(x);
  const trusted = after.trustedManagers.filter((t) => !before.trustedManagers.some((b) => key(b) === key(t)));
  if (trusted.length > 0)
    out.push(
      `trustedManagers widened: ${trusted.map((t) => (typeof t === "string" ? `${t} (replicas, labels, annotations)` : `${t.manager} for ${t.paths.join(", ")}`)).join("; ")}`,
    );
  const rules = after.ignoreDifferences.filter(
    (r) => !before.ignoreDifferences.some((b) => key(b) === key(r)),
  );
  for (const r of rules) {
    const what = `${r.group ? `${r.group}/` : ""}${r.kind}${r.name ? ` ${r.name}` : ""}`;
    const fields = [...r.jsonPointers, ...r.jqPathExpressions];
    if (fields.length > 0) out.push(`ignoreDifferences widened: ${what} ignores ${fields.join(", ")}`);
    if (r.managedFieldsManagers.length > 0)
      out.push(
        `managedFieldsManagers widened: ${what} ignores every field of ${r.managedFieldsManagers.join(", ")}`,
      );
  }
  const was = before.syncPolicy;
  const now = after.syncPolicy;
  if (was.automated?.selfHeal && !now.automated?.selfHeal)
    out.push("selfHeal turned off: out-of-band changes stay until the next sync");
  if (was.automated?.prune && now.automated && !now.automated.prune)
    out.push("prune turned off: objects removed from Git stay in the cluster");
  for (const [option, value, text] of SYNC_OPTION_LOOSENINGS)
    if (was.syncOptions[option] !== value && now.syncOptions[option] === value) out.push(text);
  return out;
}

/** How a required check is told apart: a check pinned to an app is another one than its bare name. */
export const checkKey = (c: RequiredCheck) => (typeof c === "string" ? c : `${c.name}@${c.app}`);

/**
 * requireChecks loosened: removed, or no longer every check it named (pinned ones by their app);
 * `true` and a list cannot be compared (the branch's required checks may be any), so either way
 * counts as loosening.
 */
function weakerChecks(
  before: EnvironmentConfig["requireChecks"],
  after: EnvironmentConfig["requireChecks"],
): string[] {
  if (before === undefined || JSON.stringify(before) === JSON.stringify(after)) return [];
  if (after === undefined) return ["requireChecks removed: revisions deploy without passing checks"];
  if (before === true || after === true)
    return [`requireChecks changed from ${show(before)} to ${show(after)}`];
  const dropped = before.filter((c) => !after.some((a) => checkKey(a) === checkKey(c)));
  return dropped.length > 0
    ? [`required checks no longer required: ${dropped.map(checkKey).join(", ")}`]
    : [];
}

const windowKey = (w: SyncWindow) => JSON.stringify(w);

/**
 * Sync windows loosened: a deny window removed or changed, an allow window added where allow
 * windows already restricted syncs, or every allow window removed. (Whether a changed schedule
 * covers more time is not worked out: any change of a deny window counts.)
 */
function weakerWindows(before: SyncWindow[], after: SyncWindow[]): string[] {
  const out: string[] = [];
  const has = (list: SyncWindow[], w: SyncWindow) => list.some((x) => windowKey(x) === windowKey(w));
  const deny = (l: SyncWindow[]) => l.filter((w) => w.kind === "deny");
  const allow = (l: SyncWindow[]) => l.filter((w) => w.kind === "allow");
  const goneDeny = deny(before).filter((w) => !has(after, w));
  if (goneDeny.length > 0)
    out.push(`deny sync windows removed or changed: ${goneDeny.map((w) => w.schedule).join(", ")}`);
  if (allow(before).length > 0) {
    if (allow(after).length === 0) out.push("allow sync windows removed: syncs allowed at any time");
    else {
      const added = allow(after).filter((w) => !has(before, w));
      if (added.length > 0)
        out.push(`allow sync windows added or widened: ${added.map((w) => w.schedule).join(", ")}`);
    }
  }
  return out;
}

/** Every environment whose configuration `after` changes, added or removes. */
export function configChanges(
  before: SyncwardConfig | undefined,
  after: SyncwardConfig,
): EnvironmentChange[] {
  const old = new Map((before?.environments ?? []).map((e) => [e.name, e]));
  const changes: EnvironmentChange[] = [];
  for (const env of after.environments) {
    const was = old.get(env.name);
    if (!was) {
      changes.push({
        env: env.name,
        kind: "added",
        fields: [
          `destination: ${show(env.destination)}`,
          // Where it may write besides its destination: a new environment that lists another's
          // namespace can write that environment's objects.
          ...(env.policy.namespaces.some((n) => n !== env.destination.namespace)
            ? [`namespaces: ${show(env.policy.namespaces)}`]
            : []),
          `sync: ${env.syncPolicy.automated ? `automated ${show(env.syncPolicy.automated)}` : "manual"}`,
          ...(env.approval ? [`approval: ${show(env.approval)}`] : []),
          ...(env.production ? ["production: true"] : []),
        ],
        weakens: [],
      });
      continue;
    }
    const fields = FIELDS.filter((f) => JSON.stringify(was[f]) !== JSON.stringify(env[f])).map(
      (f) => `${f}: ${show(was[f])} -> ${show(env[f])}`,
    );
    if (fields.length > 0)
      changes.push({ env: env.name, kind: "changed", fields, weakens: weakenedGuards(was, env) });
  }
  intoGuardedPlaces(before, after, changes);
  const kept = new Set(after.environments.map((e) => e.name));
  for (const env of before?.environments ?? []) {
    if (!kept.has(env.name))
      changes.push({
        env: env.name,
        kind: "removed",
        fields: ["syncward stops syncing it; its objects stay in the cluster, unmanaged"],
        weakens: env.production || env.approval ? ["a guarded environment is removed"] : [],
      });
  }
  return changes;
}

const isGuarded = (e: EnvironmentConfig) => Boolean(e.production || e.approval);

/** Where an environment may write: its destination and its allowed namespaces, on its cluster. */
function places(e: EnvironmentConfig): string[] {
  const cluster = e.destination.inCluster ? "(in-cluster)" : (destinationName(e.destination) ?? "");
  return [...new Set([e.destination.namespace, ...e.policy.namespaces])].map((ns) => `${cluster}\u0000${ns}`);
}

/**
 * An environment without guards that now writes where a guarded one deploys (added there, or
 * moved there): it can change the guarded environment's objects without its approval, so the
 * change is a loosening of the guarded one.
 */
function intoGuardedPlaces(
  before: SyncwardConfig | undefined,
  after: SyncwardConfig,
  changes: EnvironmentChange[],
): void {
  const owners = new Map<string, string>();
  for (const e of [...(before?.environments ?? []), ...after.environments])
    if (isGuarded(e)) owners.set(`${places(e)[0]}`, e.name);
  const old = new Map((before?.environments ?? []).map((e) => [e.name, e]));
  for (const env of after.environments) {
    if (isGuarded(env)) continue;
    const had = new Set(old.has(env.name) ? places(old.get(env.name) as EnvironmentConfig) : []);
    const hit = places(env)
      .filter((p) => !had.has(p) && owners.has(p) && owners.get(p) !== env.name)
      .map((p) => ({ guarded: owners.get(p) as string, ns: p.split("\u0000")[1] ?? "" }));
    if (hit.length === 0) continue;
    let change = changes.find((c) => c.env === env.name);
    if (!change) {
      change = { env: env.name, kind: "changed", fields: [], weakens: [] };
      changes.push(change);
    }
    for (const h of hit)
      change.weakens.push(`writes into ${h.guarded}'s namespace ${h.ns} without ${h.guarded}'s guards`);
    change.intoGuarded = [...new Set(hit.map((h) => h.guarded))];
  }
}
