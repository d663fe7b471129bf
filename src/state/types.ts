// Durable per-environment state, as stored in the cluster and shown by the CLI and GitHub.
import type { OperationPhase } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import type { HealthRecord } from "./health-records.ts";

export type Trigger =
  | "push"
  | "merge"
  | "comment"
  | "selfHeal"
  | "retry"
  | "poll"
  | "cli"
  | "promotion"
  /** A person re-deployed an earlier history entry's revision and pinned the environment there. */
  | "rollback"
  /** A person removed the pin: automated syncs follow the branch again. */
  | "unpin"
  /** syncward went back on its own from a release that stayed Degraded (rollback.onDegraded). */
  | "autoRollback";

/** What a promotion deployed on: its upstreams, why, and the evidence as people read it. */
export interface PromotionNote {
  /** The upstream environments whose evidence was used. */
  from: string[];
  /** "continuous promotion", "/promote prod by @alice", "syncward app promote prod". */
  reason: string;
  /** One line per upstream and check: "staging: Healthy for 34m at this commit", "e2e passed". */
  evidence: string[];
}

export interface HistoryEntry {
  id: number;
  startedAt: string;
  finishedAt: string;
  revision: string;
  trigger: Trigger;
  actor: string;
  result: OperationPhase;
  message: string;
  /**
   * The title (first line of the message, bounded) of `revision`, when the source knew it at sync
   * time. Absent in entries written before titles were kept, or when the source could not tell.
   */
  title?: string;
  counts: { created: number; configured: number; pruned: number; failed: number };
  /** For self-heals: `apps/Deployment:shop/web /spec/replicas`. */
  drifted?: string[];
  /**
   * For self-heals: every reverted path with the field manager, operation and time of the change
   * and its masked live value; security-relevant ones carry `security`.
   */
  reverted?: RevertedChange[];
  /** Attempts of this operation that failed and were retried (an outage, a 5xx), oldest first. */
  retried?: FailedAttempt[];
  /** How many retried attempts are left out of `retried` (it keeps the first 3 and the last 10). */
  retriedOmitted?: number;
  /** Hooks the operation ran, in order: PreSync, Sync, PostSync, SyncFail. */
  hooks?: Array<{ kind: string; name: string; phase: string; wave: number; outcome: string }>;
  /** A promotion: the upstreams' evidence it deployed on. */
  promotion?: PromotionNote;
  /** An automatic rollback: the release it went back from and why (reconciler/auto-rollback.ts). */
  autoRollback?: AutoRollbackNote;
  /** A person's rollback: the entry it re-deployed, who, and why. */
  rollback?: RollbackNote;
  /**
   * CustomResourceDefinitions the operation created or changed, by name: an automatic rollback
   * never goes back past them unless rollback.acrossCRDChanges says so.
   */
  crds?: string[];
  /**
   * Digest of the render a successful sync applied (render-digest.ts): a rollback to this entry
   * deploys only a render with this digest. Absent in entries written before it was kept.
   */
  renderDigest?: string;
}

/** What a person's rollback re-deployed and why, as the pin it set records it. */
export interface RollbackNote {
  /** The history entry whose revision (and render) it re-deployed. */
  historyId: number;
  revision: string;
  by: string;
  /** Why, as the person said it (`app rollback --reason`, `/rollback on #7`); "" for nothing. */
  reason: string;
}

/** Why syncward rolled an environment back on its own, and the evidence it used. */
export interface AutoRollbackNote {
  /** The bad release's commit. */
  from: string;
  /** "a1b2c3d stayed Degraded for 5m (since …)". */
  reason: string;
  /** One line each: what was Degraded, which release was last Healthy and for how long. */
  evidence: string[];
}

/**
 * Since when the environment's newest release has been bad without a break: Degraded at the
 * synced commit, or its sync failed. Kept by the state store on every write (degraded-stretch.ts).
 */
export interface DegradedStretch {
  revision: string;
  since: string;
  /** "Degraded" or "sync failed". */
  why: string;
}

/** A bad release an automatic rollback was decided for, once: rolled back, or why not. */
export interface AutoRollbackMark {
  revision: string;
  at: string;
  /** "rolled back to a1b2c3d", or why it was not ("it changed CRD …"). */
  outcome: string;
}

export interface FailedAttempt {
  attempt: number;
  startedAt: string;
  finishedAt: string;
  /** A retry re-reads the branch, so attempts may differ in revision. */
  revision: string;
  message: string;
}

/**
 * The environment held at one revision by a rollback: automated syncs (push, poll, a retry with
 * refresh) take it instead of the branch head until `app unpin` removes it.
 */
export interface PinRecord {
  revision: string;
  /** The history entry whose revision it re-deployed. */
  historyId: number;
  by: string;
  at: string;
  reason: string;
  /** The render that entry applied: every sync while pinned must render exactly it. */
  renderDigest?: string;
  /**
   * The release the rollback went back from (the one that failed last, else the one running):
   * only an approval of a commit after it, and not it, ends the pin. Absent in pins set before
   * it was kept: a commit after the pinned one then.
   */
  from?: string;
}

export interface FreezeRecord {
  by: string;
  at: string;
  reason: string;
}

export interface ApprovalRecord {
  sha: string;
  /** The approver's login, for people to read. */
  by: string;
  /** The approver's GitHub user id: approvals are counted per id (a renamed account is one person). */
  id?: number;
  at: string;
  /**
   * The last synced revision when it was given ("" for none): the approver was found to have
   * contributed nothing to `base..sha`. Once the environment's last synced revision is another
   * one (a rollback by the CLI, say), the range and its contributors differ, and the approval no
   * longer counts. Absent: recorded before bases were kept (counted as before).
   */
  base?: string;
  /**
   * Given while `approval.allowAuthor` was true, so who contributed was not looked at: once the
   * rule is false again it no longer counts.
   */
  unchecked?: true;
  /**
   * Fingerprint of the environment's configuration when it was given (approvedConfigOf): once the
   * config in force is another (a merged change of its source, values or rules), what would be
   * deployed is not what was approved, and it no longer counts. Absent: recorded before.
   */
  config?: string;
  /**
   * Digest of the render it approved (the one its wait announced): a later render of the same
   * commit that differs is not what was approved, and it no longer counts. Absent: recorded before.
   */
  render?: string;
}

/**
 * The guards of the config a revision was deployed under: a later config that loosens them is
 * held to them until it is itself deployed (see stricterRules).
 */
export interface DeployedRules {
  revision: string;
  approval?: import("../config/types.ts").ApprovalRule;
  commands: import("../config/types.ts").CommandPermissions;
  namespaces: string[];
  clusterResources: Array<{ group: string; kind: string }>;
  requireSignedCommits: boolean;
  production: boolean;
  /** Checks required of a revision; null for none (absent: recorded before they were kept). */
  requireChecks?: import("../config/types.ts").EnvironmentConfig["requireChecks"] | null;
  /** Sync windows (absent: recorded before they were kept). */
  syncWindows?: import("../config/types.ts").SyncWindow[];
  destination?: import("../config/types.ts").EnvironmentConfig["destination"];
  /** Fingerprint of the source and destination settings it was rendered with. */
  render?: string;
  /** The default-branch commit its config was read at, when known. */
  configRevision?: string;
  /** Trusted managers, ignored differences and sync policy it was deployed with (absent: recorded before they were kept). */
  driftPolicy?: Pick<
    import("../config/types.ts").EnvironmentConfig,
    "trustedManagers" | "ignoreDifferences" | "syncPolicy"
  >;
}

export interface PendingSync {
  revision: string;
  /** Fingerprint of the environment's configuration when the wait was announced (approvedConfigOf). */
  config?: string;
  /** Digest of the render the wait announced, which approvals given for it bind (render-binding.ts). */
  render?: string;
  /** That render's objects and their short hashes, when small (to say what changed since). */
  renderedObjects?: Record<string, string>;
  trigger: Trigger;
  actor: string;
  /** The actor's GitHub user id, when a person's request named it. */
  actorId?: number;
  requestedAt: string;
  /** A person asked for it (`/sync`): run it as a manual sync once approved. */
  manual: boolean;
  /**
   * Who pushed or merged `revision`, as its push webhook named them (a login). Absent: no push
   * event was seen for it (a poll found the commit first), so only GitHub's repository activity
   * can tell who pushed it.
   */
  pusher?: string;
  /** The pusher's GitHub user id (absent in states written before it was kept). */
  pusherId?: number;
  prune?: boolean;
  force?: boolean;
  allowEmpty?: boolean;
  confirmPrune?: boolean;
  /**
   * Approved in full while the upstreams of a promoted environment had not proven the revision
   * (any more): released, without another approval, by the first pass that finds it proven.
   */
  approvedAwaitingProof?: true;
}

/**
 * A sync a person asked for (a comment, a button, an approval) on a replica that does not hold the
 * app's lease. It is written here for the replica that does hold it, whose state watch sees the
 * change and runs it; so a request never depends on which replica the webhook reached.
 */
export interface HandedOverSync {
  revision: string;
  trigger: Trigger;
  actor: string;
  requestedAt: string;
  prune?: boolean;
  force?: boolean;
  ignoreFreeze?: boolean;
  /** false: the request need not be approved (the CLI's); otherwise a gated environment's approval applies. */
  needsApproval?: boolean;
  allowEmpty?: boolean;
  confirmPrune?: boolean;
  /** An approval of a newer commit ends this pin (ManualSync.endsPin): removed once the sync may write. */
  endsPin?: PinRecord;
}

/**
 * A push (or merge) that reached a replica without the app's lease. Written here so the replica
 * that holds the lease (its state watch) or the next one to take the app syncs it, whichever
 * replica GitHub delivered it to. Only the latest push of an environment matters: the loop syncs
 * the branch head, so a newer push replaces an older one.
 */
export interface HandedOverPush {
  branch: string;
  trigger: Trigger;
  actor: string;
  /** The actor's GitHub user id, when the webhook named it. */
  actorId?: number;
  at: string;
  /** Where the push moved the branch (and from), when the webhook said so. */
  revision?: string;
  before?: string;
  /** The title of `revision`, when the webhook carried its message (history labels it). */
  title?: string;
  /** The push changed the repository's syncward config: every replica reads it again. */
  config?: boolean;
}

/**
 * GitHub's word that the app's repository is gone (uninstalled, suspended, removed from the
 * installation, archived, deleted) or has a new name, delivered to one replica and recorded in every
 * environment's state of the app so that every replica running it hears: each stops the app (the
 * lease holder first finishing or aborting its pass), and after a rename starts it under the new
 * name. Only events newer than a replica's runtime concern it (a reinstall starts afresh).
 */
export interface HandedOverRepositoryEvent {
  action: "removed" | "renamed";
  at: string;
  /** Where a renamed or transferred repository now is. */
  to?: {
    owner: string;
    repo: string;
    installationId: number;
    htmlUrl: string;
    defaultBranch: string;
    /** GitHub's repository id (absent in events recorded before identities). */
    id?: number;
  };
}

/** A push webhook's record of who moved a branch to `after`. */
export interface RecordedPush {
  after: string;
  before?: string;
  login: string;
  id?: number;
}

export type SyncStatus = "Synced" | "OutOfSync" | "Unknown";

export interface EnvironmentState {
  environment: string;
  /**
   * The readable name (`owner/repo`) of the app whose environment this is, as of its last write:
   * for people only. The instance name (identity.ts) is what ties a state to its repository.
   */
  repository?: string;
  lastSyncedRevision?: string;
  syncStatus: SyncStatus;
  health?: string;
  /** Why the environment is stuck after retries, if it is. */
  stuck?: { revision: string; reason: string; since: string };
  history: HistoryEntry[];
  freeze?: FreezeRecord;
  /** Held at a rolled-back revision (see PinRecord). */
  pin?: PinRecord;
  /** Runtime policy override set by `app set` (freeze wins over it). */
  policyOverride?: { automated: boolean; prune: boolean; selfHeal: boolean; by: string; at: string };
  pendingApprovals: ApprovalRecord[];
  /** A sync held until enough approvals for its revision arrive (environments with `approval`). */
  pendingSync?: PendingSync;
  /** A requested sync the lease holder is to run (see HandedOverSync). */
  handedOver?: HandedOverSync;
  /**
   * Who moved the environment's branch to each recent revision, as push webhooks named them,
   * written by whichever replica received the push (newest last): the lease holder, a restarted
   * replica and a manual wait all know who pushed what they hold for approval.
   */
  recentPushes?: RecordedPush[];
  /** A push delivered to a replica without the lease, for the one with it (see HandedOverPush). */
  handedOverPush?: HandedOverPush;
  /** The repository removed or renamed, for every replica running the app (see HandedOverRepositoryEvent). */
  repositoryEvent?: HandedOverRepositoryEvent;
  /** Kinds this environment has applied, so pruning finds a kind that vanished from Git entirely. */
  inventory?: Array<{ apiVersion: string; kind: string }>;
  /** Fingerprint of the hooks of the revision last synced: a revision that changes only a hook runs it. */
  hooksDigest?: string;
  /** The last render or sync problem reported for a revision, so a poll does not report it again. */
  lastError?: { revision: string; message: string; at: string };
  /** The guards of the config the last synced revision was deployed under. */
  deployedRules?: DeployedRules;
  /** Digest of the render of the last synced revision: a revision that renders the same needs nothing. */
  renderedDigest?: string;
  /**
   * The objects of that render with a short hash each (Secrets left out), when it had few enough
   * (render-binding.ts): what a later, differing render of the same commit changed.
   */
  renderedObjects?: Record<string, string>;
  /**
   * The GitHub id each listed approver's login (lowercased) stood for when syncward first needed
   * it: a later approval under that login from another id (the login renamed and registered
   * again) is refused. Never replaced; removing the login from approval.users is how it ends.
   */
  approverIds?: Record<string, number>;
  /** When it was synced and Healthy at which commit, without a break (newest last): a promotion's evidence. */
  healthRecords?: HealthRecord[];
  /** The newest release bad since when (see DegradedStretch); absent: it is not. */
  degraded?: DegradedStretch;
  /** Bad releases an automatic rollback was decided for (newest last, a few kept): never twice. */
  autoRollbacks?: AutoRollbackMark[];
  /** Self-heal counters per object key at the current revision, for drift-fight detection. */
  selfHeals: Record<string, { revision: string; times: string[] }>;
}
