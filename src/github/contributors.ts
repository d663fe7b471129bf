// Who contributed to what an approval would deploy: everyone who authored or committed a commit
// of the range, opened or merged a pull request that carries one, pushed it, or asked for the
// sync. None of them may approve it (unless `approval.allowAuthor`). Pure: the GitHub answers
// come in (range.ts fetches them), a list of people and why each one counts comes out.
//
// People are told apart by GitHub user id, never by login (a login can be renamed and reused).
// Two kinds of contributor have no id: a commit whose address no GitHub account claims (GitHub
// links a commit to every verified address of an account, noreply ones included, so such an
// address belongs to nobody syncward can ask about; it is matched against the approver's noreply
// addresses and shown to approvers), and the pusher or requester the reconciler recorded by login.
//
// Two kinds of contributor hide the person behind them, and an approval then fails closed (unless
// `approval.allowAuthor`): a bot (a workflow's token, an app) acts for whoever triggered it, and
// a `Co-authored-by:` address that neither GitHub's noreply form nor a linked commit ties to an
// account could be anyone's.

/** A GitHub user as the REST API shows one. */
export interface GitHubUser {
  id: number;
  login: string;
  type?: string;
}

/** One commit of the range, as the compare API lists it. */
export interface RangeCommit {
  sha: string;
  /** The GitHub account GitHub tied the author's address to (null: none). */
  author: GitHubUser | null;
  committer: GitHubUser | null;
  authorEmail?: string;
  committerEmail?: string;
  /** First line of the message, for the check run. */
  title?: string;
  /** The message's `Co-authored-by:` trailers. */
  coAuthors?: CoAuthor[];
}

/** A `Co-authored-by: Name <email>` trailer. */
export interface CoAuthor {
  name: string;
  email: string;
}

/** A pull request that carries at least one commit of the range. */
export interface RangePull {
  number: number;
  title?: string;
  user: GitHubUser | null;
  mergedBy: GitHubUser | null;
  /** The commits of the range it carries. */
  commits: string[];
  /** Its own commits (GET /pulls/{n}/commits): a squash merge shows none of them on the branch. */
  ownCommits?: RangeCommit[];
  /** Who moved its branch (its head repository's activity). */
  branchPushes?: RangePush[];
}

/** A change of the branch from GitHub's repository activity: who moved it to `after`, and how. */
export interface RangePush {
  after: string;
  before?: string;
  actor: GitHubUser | null;
  kind: string;
}

export interface Range {
  /** The last synced revision (absent: a first deployment, only the pending commit counts). */
  base?: string;
  head: string;
  commits: RangeCommit[];
  pulls: RangePull[];
  /** Pushes and merges that moved the branch (repository activity); absent when unreadable. */
  pushes?: RangePush[];
  /** Why the repository activity could not be used: GitHub's answer (403, 404), or what it lacks. */
  activityStatus?: number | string;
  /** What of the pull requests could not be read in full (their commits, who pushed to them). */
  unreadable?: string[];
}

/**
 * Someone named outside the range: a pusher the push webhooks recorded (of the pending revision
 * unless `revision` says which), whoever requested the pending sync.
 */
export interface NamedPerson {
  login: string;
  id?: number;
  role: "pushed" | "requested";
  /** The revision of the range they pushed (default the pending one). */
  revision?: string;
}

export interface Contributor {
  id?: number;
  login?: string;
  email?: string;
  /** Why this person counts, in the words a refusal uses: `authored abc1234`, `merged #12`. */
  reasons: string[];
  /** A bot: the person behind it is unknown. */
  bot?: boolean;
  /** A co-author no GitHub account could be tied to: the person behind it is unknown. */
  unmatched?: boolean;
  /** GitHub names no account for who moved a branch (a deleted account, a deploy key): unknown. */
  noAccount?: boolean;
}

/** GitHub's own committer for web merges, squashes and edits: it never approves anything. */
const WEB_FLOW = "web-flow";
/** GitHub's merge queue: it merges what a person queued (the activity names that person). */
const MERGE_QUEUE = "github-merge-queue[bot]";

const isGitHubItself = (login: string) => login === WEB_FLOW || login === MERGE_QUEUE;
const isBot = (u: { login?: string; type?: string }) =>
  u.type === "Bot" || (u.login?.toLowerCase().endsWith("[bot]") ?? false);

const TRAILER = /^co-authored-by:\s*(.*?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/gim;

/** The `Co-authored-by:` trailers of a commit message (GitHub reads them from anywhere in it). */
export function coAuthorsOf(message: string): CoAuthor[] {
  return [...message.matchAll(TRAILER)].map((m) => ({ name: m[1] ?? "", email: m[2] ?? "" }));
}

const NOREPLY = /^(?:(\d+)\+)?([a-z0-9-]+(?:\[bot\])?)@users\.noreply\.github\.com$/i;

/**
 * The account a co-author's address names, as GitHub's co-author credit does: its noreply form
 * (`ID+login@users.noreply.github.com`, or the older `login@…`), else an address GitHub linked
 * to an account on another commit of the range; undefined when nothing ties it to one.
 */
function coAuthorAccount(
  email: string,
  linked: ReadonlyMap<string, GitHubUser>,
): { id?: number; login: string; type?: string } | undefined {
  const noreply = NOREPLY.exec(email);
  if (noreply?.[2]) return noreply[1] ? { id: Number(noreply[1]), login: noreply[2] } : { login: noreply[2] };
  return linked.get(email.toLowerCase());
}

const short = (sha: string) => sha.slice(0, 7);

/** Everyone who contributed to `range` or to its pending sync, each once, with every reason. */
export function contributorsOf(range: Range, named: readonly NamedPerson[] = []): Contributor[] {
  const byKey = new Map<string, Contributor>();
  const add = (who: Omit<Contributor, "reasons">, reason: string) => {
    const key = who.noAccount
      ? "no account"
      : who.id !== undefined
        ? `id:${who.id}`
        : who.login !== undefined
          ? `login:${who.login.toLowerCase()}`
          : `email:${(who.email ?? "").toLowerCase()}`;
    if (key === "email:") return;
    const known = byKey.get(key);
    if (known === undefined) byKey.set(key, { ...who, reasons: [reason] });
    else if (!known.reasons.includes(reason)) known.reasons.push(reason);
  };
  const addAccount = (user: { id?: number; login: string; type?: string }, reason: string) => {
    if (isGitHubItself(user.login)) return;
    add(
      {
        ...(user.id === undefined ? {} : { id: user.id }),
        login: user.login,
        ...(isBot(user) ? { bot: true } : {}),
      },
      reason,
    );
  };
  const addUser = (user: GitHubUser | null, email: string | undefined, reason: string) => {
    if (user) addAccount(user, reason);
    else if (email) add({ email }, reason);
  };
  const pullCommits = range.pulls.flatMap((p) => (p.ownCommits ?? []).map((c) => ({ c, p })));
  // Addresses GitHub linked to an account somewhere in the range: a co-author writing one is that account.
  const linked = new Map<string, GitHubUser>();
  // Addresses GitHub tied to no account on a commit: a co-author writing one is no account either
  // (GitHub's co-author credit would not find one), so it is that address, as an author would be.
  const unclaimed = new Set<string>();
  for (const c of [...range.commits, ...pullCommits.map(({ c }) => c)]) {
    for (const [who, email] of [
      [c.author, c.authorEmail],
      [c.committer, c.committerEmail],
    ] as const) {
      if (email === undefined) continue;
      if (who) linked.set(email.toLowerCase(), who);
      else unclaimed.add(email.toLowerCase());
    }
  }
  const fromCommit = (c: RangeCommit, of: string) => {
    addUser(c.author, c.authorEmail, `authored ${short(c.sha)}${of}`);
    addUser(c.committer, c.committerEmail, `committed ${short(c.sha)}${of}`);
    for (const co of c.coAuthors ?? []) {
      const account = coAuthorAccount(co.email, linked);
      const reason = `co-authored ${short(c.sha)}${of}`;
      if (account) addAccount(account, reason);
      else
        add(
          { email: co.email, ...(unclaimed.has(co.email.toLowerCase()) ? {} : { unmatched: true }) },
          reason,
        );
    }
  };
  for (const c of range.commits) fromCommit(c, "");
  for (const p of range.pulls) {
    if (p.user) addAccount(p.user, `opened #${p.number}`);
    if (p.mergedBy) addAccount(p.mergedBy, `merged #${p.number}`);
  }
  for (const { c, p } of pullCommits) fromCommit(c, ` in #${p.number}`);
  // An activity entry without an actor (a deleted account, a deploy key) hides who moved the
  // branch, as a bot does: it is kept, and refuses every approval (unknownPeople).
  const addActor = (actor: GitHubUser | null, reason: string) => {
    if (actor) addAccount(actor, reason);
    else add({ noAccount: true }, reason);
  };
  for (const p of range.pulls)
    for (const push of p.branchPushes ?? [])
      if (push.kind !== "branch_deletion") addActor(push.actor, `pushed to #${p.number}`);
  const inRange = new Set([range.head, ...range.commits.map((c) => c.sha)]);
  for (const p of range.pushes ?? []) {
    if (!inRange.has(p.after)) continue;
    const how = p.kind === "pr_merge" || p.kind === "merge_queue_merge" ? "merged" : "pushed";
    addActor(p.actor, `${how} ${short(p.after)}`);
  }
  for (const n of named) {
    const reason =
      n.role === "pushed"
        ? `pushed ${short(n.revision ?? range.head)}`
        : `requested the sync of ${short(range.head)}`;
    addAccount(n, reason);
  }
  return mergeLogins([...byKey.values()]);
}

/** A person named by login only is the same as one known by id with that login. */
function mergeLogins(people: Contributor[]): Contributor[] {
  const withId = new Map<string, Contributor>();
  for (const p of people)
    if (p.id !== undefined && p.login !== undefined) withId.set(p.login.toLowerCase(), p);
  const out: Contributor[] = [];
  for (const p of people) {
    const same = p.id === undefined && p.login !== undefined ? withId.get(p.login.toLowerCase()) : undefined;
    if (same === undefined) out.push(p);
    else for (const r of p.reasons) if (!same.reasons.includes(r)) same.reasons.push(r);
  }
  return out;
}

/**
 * Contributors behind whom the person is unknown, each said in a refusal's words: bots (a
 * workflow's token acts for whoever triggered the workflow) and co-authors no account is tied to.
 */
export function unknownPeople(
  contributors: readonly Contributor[],
  trustedBots: readonly string[] = [],
): string[] {
  const trusted = new Set(trustedBots.map((b) => b.toLowerCase()));
  return contributors
    .filter((c) => (c.bot && !trusted.has(c.login?.toLowerCase() ?? "")) || c.unmatched || c.noAccount)
    .map((c) =>
      c.bot
        ? `@${c.login} (a bot: it acts for whoever triggered it) ${c.reasons.join(", ")}`
        : c.noAccount
          ? `someone GitHub names no account for (a deleted account, or a deploy key) ${c.reasons.join(", ")}`
          : `the co-author <${c.email}>, whom no GitHub account is tied to, ${c.reasons.join(", ")}`,
    );
}

/** The addresses GitHub gives `user` for web commits: they are theirs whatever their settings. */
export function noreplyAddresses(user: GitHubUser): string[] {
  const login = user.login.toLowerCase();
  return [`${user.id}+${login}@users.noreply.github.com`, `${login}@users.noreply.github.com`];
}

/** Why `user` contributed to the range, or undefined when they did not. */
export function contributionOf(contributors: readonly Contributor[], user: GitHubUser): string[] | undefined {
  const login = user.login.toLowerCase();
  const addresses = noreplyAddresses(user);
  const reasons = contributors
    .filter((c) =>
      c.id !== undefined
        ? c.id === user.id
        : c.login !== undefined
          ? c.login.toLowerCase() === login
          : c.email !== undefined && addresses.includes(c.email.toLowerCase()),
    )
    .flatMap((c) => c.reasons);
  return reasons.length > 0 ? reasons : undefined;
}

/** Commit authors no GitHub account claims, by address: shown to approvers, who cannot be told apart from them. */
export function unclaimedAddresses(range: Range): string[] {
  const out = new Set<string>();
  for (const c of range.commits) {
    if (!c.author && c.authorEmail) out.add(c.authorEmail);
    if (!c.committer && c.committerEmail) out.add(c.committerEmail);
  }
  return [...out];
}
