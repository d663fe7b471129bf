// Where revisions come from: a local git repository (the controller command, the CLI, the demo)
// or GitHub (the app). The reconciler only needs a branch head and the tree at a SHA.
import { checkoutTree, commitTitleOf, headOf, isAncestor, resolveRevision } from "../source/git.ts";
import { BoundedMap } from "../util/bounded-map.ts";

export interface RevisionSource {
  /** A human-readable name of the repository for `app get`. */
  readonly description: string;
  /** Full SHA of a branch's head. */
  head(branch: string): Promise<string>;
  /** Full SHA of any ref (branch, tag, short SHA). */
  resolve(ref: string): Promise<string>;
  /** A directory holding the repository tree at `sha`. */
  tree(sha: string): Promise<string>;
  /**
   * Why `sha` does not carry a verified signature, or undefined when it does (for
   * policy.requireSignedCommits). Sources that cannot tell leave it out, and such environments
   * are refused.
   */
  signatureProblem?(sha: string): Promise<string | undefined>;
  /**
   * A push told another replica where `branch` now is (sources that cache heads take the hint),
   * and the title of that commit when the push named it.
   */
  learnHead?(branch: string, sha: string, before?: string, title?: string): void;
  /**
   * This replica takes an app over: what it learned of branch heads while another replica ran the
   * app may be older than what that one deployed, so the next head is asked afresh.
   */
  forgetHeads?(): void;
  /**
   * The title (first line of the message) of commit `sha`, for history. Only what the source
   * already knows or reads without asking a remote: undefined when it does not know.
   */
  commitTitle?(sha: string): Promise<string | undefined>;
  /**
   * Whether commit `ancestor` is `descendant` or one of its ancestors: false for histories that
   * share no such line (after a force push). Sources that cannot tell leave it out, and every
   * question that needs it is answered no.
   */
  contains?(ancestor: string, descendant: string): Promise<boolean>;
}

export class LocalGitSource implements RevisionSource {
  constructor(
    readonly repoDir: string,
    private readonly cacheDir: string,
  ) {}

  get description(): string {
    return this.repoDir;
  }

  head(branch: string): Promise<string> {
    return headOf(this.repoDir, branch);
  }

  resolve(ref: string): Promise<string> {
    return resolveRevision(this.repoDir, ref);
  }

  tree(sha: string): Promise<string> {
    return checkoutTree(this.repoDir, sha, this.cacheDir);
  }

  /**
   * `git merge-base --is-ancestor`; a yes is remembered (two commits' ancestry never changes), a no
   * is asked again (the commit may not have been fetched into the repository yet).
   */
  async contains(ancestor: string, descendant: string): Promise<boolean> {
    const key = `${ancestor}...${descendant}`;
    if (this.ancestry.has(key)) return true;
    const yes = await isAncestor(this.repoDir, ancestor, descendant);
    if (yes) this.ancestry.set(key, true);
    return yes;
  }

  private readonly ancestry = new BoundedMap<string, true>(1024);

  /** One `git log` per commit: a commit's message never changes, so it is remembered. */
  async commitTitle(sha: string): Promise<string | undefined> {
    if (this.titles.has(sha)) return this.titles.get(sha);
    const title = await commitTitleOf(this.repoDir, sha);
    this.titles.set(sha, title);
    return title;
  }

  private readonly titles = new BoundedMap<string, string | undefined>(256);
}
