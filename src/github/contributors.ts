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
}

/** A pull request that carries at least one commit of the range. */
export interface RangePull {
  number: number;
  title?: string;
  user: GitHubUser | null;
  mergedBy: GitHubUser | null;
  /** The commits of the range it carries. */
  commits: string[];
}

/** A change of the branch from GitHub's repository activity: who moved it to `after`, and how. */
export interface RangePush {
  after: string;
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
  /** GitHub's answer (403, 404) when the repository activity could not be read. */
  activityStatus?: number;
}

/** Someone named outside the range: the pusher of the pending revision, whoever requested its sync. */
export interface NamedPerson {
  login: string;
  id?: number;
  role: "pushed" | "requested";
}

export interface Contributor {
  id?: number;
  login?: string;
  email?: string;
  /** Why this person counts, in the words a refusal uses: `authored abc1234`, `merged #12`. */
  reasons: string[];
}

/** GitHub's own committer for web merges, squashes and edits: it never approves anything. */
const WEB_FLOW = "web-flow";

const short = (sha: string) => sha.slice(0, 7);

/** Everyone who contributed to `range` or to its pending sync, each once, with every reason. */
export function contributorsOf(range: Range, named: readonly NamedPerson[] = []): Contributor[] {
  const byKey = new Map<string, Contributor>();
  const add = (who: { id?: number; login?: string; email?: string }, reason: string) => {
    const key =
      who.id !== undefined
        ? `id:${who.id}`
        : who.login !== undefined
          ? `login:${who.login.toLowerCase()}`
          : `email:${(who.email ?? "").toLowerCase()}`;
    if (key === "email:") return;
    const known = byKey.get(key);
    if (known === undefined) byKey.set(key, { ...who, reasons: [reason] });
    else if (!known.reasons.includes(reason)) known.reasons.push(reason);
  };
  const addUser = (user: GitHubUser | null, email: string | undefined, reason: string) => {
    if (user?.login === WEB_FLOW) return;
    if (user) add({ id: user.id, login: user.login }, reason);
    else if (email) add({ email }, reason);
  };
  for (const c of range.commits) {
    addUser(c.author, c.authorEmail, `authored ${short(c.sha)}`);
    addUser(c.committer, c.committerEmail, `committed ${short(c.sha)}`);
  }
  for (const p of range.pulls) {
    if (p.user) add({ id: p.user.id, login: p.user.login }, `opened #${p.number}`);
    if (p.mergedBy) add({ id: p.mergedBy.id, login: p.mergedBy.login }, `merged #${p.number}`);
  }
  const inRange = new Set([range.head, ...range.commits.map((c) => c.sha)]);
  for (const p of range.pushes ?? []) {
    if (!p.actor || !inRange.has(p.after) || p.actor.login === WEB_FLOW) continue;
    const how = p.kind === "pr_merge" || p.kind === "merge_queue_merge" ? "merged" : "pushed";
    add({ id: p.actor.id, login: p.actor.login }, `${how} ${short(p.after)}`);
  }
  for (const n of named) {
    const reason =
      n.role === "pushed" ? `pushed ${short(range.head)}` : `requested the sync of ${short(range.head)}`;
    add(n.id === undefined ? { login: n.login } : { id: n.id, login: n.login }, reason);
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
