// Revisions from GitHub: a branch head through the API (or from a push payload just received, so
// a push costs no extra call), and trees from the repository tarball, cached by SHA.

import type { RevisionSource } from "../reconciler/revision-source.ts";
import { commitTitle } from "../source/commit-title.ts";
import { SourceError } from "../source/errors.ts";
import { fetchGitHubTree } from "../source/github-tarball.ts";
import { BoundedMap } from "../util/bounded-map.ts";
import { GitHubUnavailableError, isTransientGitHubError, statusOf } from "./github-errors.ts";
import type { OctokitFactory, RepoRef } from "./octokit.ts";

const FULL_SHA = /^[0-9a-f]{40}$/;
/** How long a head learned from a webhook is trusted before asking the API again. */
const HINT_TTL_MS = 60_000;
/** Commits a branch was pushed away from, remembered to spot late deliveries. */
const LEFT_REMEMBERED = 1000;
/** Commits whose verification is remembered (asked before the approval gate, again before syncing, per environment). */
const VERIFIED_CACHE = 256;
/** Commit titles remembered from push payloads and the API's answers (history labels them). */
const TITLES_REMEMBERED = 1000;
/** Answers of "is A an ancestor of B" remembered (a pinned environment asks on every pass). */
const ANCESTRY_REMEMBERED = 256;

// GitHub's `commit.verification.reason` values (REST docs, "Signature verification object"), in
// words a person acts on; a reason not listed is shown as GitHub gives it.
const REASONS: Record<string, string> = {
  unsigned: "the commit is not signed",
  unknown_key: "it is signed with a key no GitHub user has added",
  no_user: "no GitHub user is associated with the committer email",
  unverified_email: "the committer email is not verified on the signer's account",
  bad_email: "the committer email is not among the signing key's identities",
  expired_key: "the signing key has expired",
  not_signing_key: "the key is not allowed to sign",
  malformed_signature: "the signature is malformed",
  invalid: "the signature does not match the commit",
  unknown_signature_type: "the signature is not a PGP signature GitHub can check",
  gpgverify_error: "GitHub could not verify the signature (an error on GitHub's side)",
  gpgverify_unavailable: "GitHub's signature verification is unavailable",
};
/** Reasons that say nothing about the commit, only that GitHub could not check it just now. */
const GITHUB_SIDE = new Set(["gpgverify_error", "gpgverify_unavailable"]);

export class GitHubSource implements RevisionSource {
  private readonly hints = new Map<string, { sha: string; at: number }>();
  /** Where each branch was last learned to be (a hint past its time included): a push must start there. */
  private readonly known = new Map<string, string>();
  /** `branch@sha` that a push moved a branch away from. */
  private readonly left = new BoundedMap<string, true>(LEFT_REMEMBERED);
  private readonly verification = new BoundedMap<string, Promise<string | undefined>>(VERIFIED_CACHE);
  private readonly titles = new BoundedMap<string, string>(TITLES_REMEMBERED);
  private readonly ancestry = new BoundedMap<string, boolean>(ANCESTRY_REMEMBERED);

  constructor(
    private readonly ref: RepoRef,
    private readonly octokit: OctokitFactory,
    private readonly cacheDir: string,
  ) {}

  get description(): string {
    return `${this.ref.owner}/${this.ref.repo}`;
  }

  /**
   * A push payload told us where `branch` is now (`before`: where it was). GitHub does not promise
   * to deliver pushes in order: a push to a commit that a later push already moved the branch
   * away from is stale, or a force push back; either way only the API knows, so it is asked. So is
   * it for a push that does not start where this source last knew the branch (a push delivered
   * late, after a newer head was read from the API; or one in between went unseen).
   */
  learnHead(branch: string, sha: string, before?: string, title?: string): void {
    this.learnTitle(sha, title);
    if (before !== undefined) this.left.set(`${branch}@${before}`, true);
    const known = this.known.get(branch);
    const elsewhere = before !== undefined && known !== undefined && known !== before && known !== sha;
    if (this.left.has(`${branch}@${sha}`) || elsewhere) {
      this.hints.delete(branch);
      return;
    }
    this.hints.set(branch, { sha, at: Date.now() });
    this.known.set(branch, sha);
  }

  forgetHeads(): void {
    this.hints.clear();
    this.known.clear();
  }

  async head(branch: string): Promise<string> {
    const hint = this.hints.get(branch);
    if (hint && Date.now() - hint.at < HINT_TTL_MS) return hint.sha;
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.ref, branch });
    // A push learned while GitHub was being asked is newer than its answer: the answer must not
    // put the branch back where it was (a merge's payload carries no `before` to guard it).
    const meanwhile = this.hints.get(branch);
    if (meanwhile && meanwhile !== hint) return meanwhile.sha;
    // (Fakes and older GitHub Enterprise answers may leave the message out: it is only a label.)
    this.learnHead(branch, data.commit.sha, undefined, data.commit.commit?.message);
    return data.commit.sha;
  }

  /** A commit's message seen in a payload or an answer: its title labels history, at no request. */
  learnTitle(sha: string, message: string | undefined | null): void {
    const title = commitTitle(message);
    if (title !== undefined && FULL_SHA.test(sha)) this.titles.set(sha, title);
  }

  /** The title of `sha` if a push payload or an earlier answer carried it; GitHub is not asked. */
  async commitTitle(sha: string): Promise<string | undefined> {
    return this.titles.get(sha);
  }

  async resolve(ref: string): Promise<string> {
    if (FULL_SHA.test(ref)) return ref;
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getCommit({ ...this.ref, ref });
    this.learnTitle(data.sha, data.commit?.message);
    return data.sha;
  }

  /**
   * GitHub's compare of `ancestor...descendant`: "ahead" or "identical" is a line of history from
   * one to the other; "behind" or "diverged" is not, and neither is a commit GitHub no longer has
   * (404, 422). Two commits' ancestry never changes, so an answer is remembered; a failure to ask
   * (GitHub down) throws and is asked again.
   */
  async contains(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return true;
    const key = `${ancestor}...${descendant}`;
    const known = this.ancestry.get(key);
    if (known !== undefined) return known;
    const gh = await this.octokit();
    let answer: boolean;
    try {
      const { data } = await gh.rest.repos.compareCommitsWithBasehead({
        ...this.ref,
        basehead: key,
        per_page: 1,
      });
      answer = data.status === "ahead" || data.status === "identical";
    } catch (err) {
      const status = statusOf(err);
      if (status !== 404 && status !== 422) throw err;
      answer = false;
    }
    this.ancestry.set(key, answer);
    return answer;
  }

  /** GitHub's commit verification (`GET /repos/{owner}/{repo}/commits/{ref}`), for policy.requireSignedCommits. */
  signatureProblem(sha: string): Promise<string | undefined> {
    // One request per commit, however many environments ask at once; a failed one is asked again.
    let pending = this.verification.get(sha);
    if (!pending) {
      pending = this.verify(sha);
      pending.catch(() => this.verification.delete(sha));
      this.verification.set(sha, pending);
    }
    return pending;
  }

  private async verify(sha: string): Promise<string | undefined> {
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getCommit({ ...this.ref, ref: sha });
    this.learnTitle(sha, data.commit?.message);
    const v = data.commit.verification;
    if (v?.verified) return undefined;
    // Thrown, so neither cached nor recorded as a refusal: the next pass or retry asks again.
    if (v && GITHUB_SIDE.has(v.reason))
      throw new GitHubUnavailableError(`commit ${sha.slice(0, 7)}: ${REASONS[v.reason]} (${v.reason})`, 503);
    const why = v ? `${REASONS[v.reason] ?? v.reason} (${v.reason})` : "GitHub returned no verification";
    return `commit ${sha.slice(0, 7)} is not Verified on GitHub: ${why}`;
  }

  async tree(sha: string): Promise<string> {
    try {
      return await fetchGitHubTree(await this.octokit(), { ...this.ref, sha }, this.cacheDir);
    } catch (err) {
      // GitHub down or limiting us is not a broken source: not a SourceError, so the pass fails
      // without a "render failed" in history or on the commit, and the next pass fetches again.
      if (err instanceof SourceError && isTransientGitHubError(err.cause)) {
        const status = statusOf(err.cause) ?? 503;
        throw new GitHubUnavailableError(
          `GitHub did not serve ${this.description} at ${sha} (${status}); the next pass tries again`,
          status,
          { cause: err },
        );
      }
      throw err;
    }
  }
}
