// Where a preview's Reconciler reads its pull request's head: from what the preview manager told
// it (the head it let the preview take, after checking who pushed it), never from GitHub. A
// preview follows its pull request through `synchronize` webhooks and the sweep, so an idle
// preview asks GitHub nothing, and a head no check has let through (a push by someone without the
// template's permission) is never synced because a pass happened to read the branch.
import type { RevisionSource } from "../reconciler/revision-source.ts";
import type { GitHubSource } from "./github-source.ts";

export class PreviewSource implements RevisionSource {
  private sha: string;
  /** Set when this replica takes the preview over: the next head is read from its stored record. */
  private stale = false;
  /** Counts heads learned, so a stored head read while a push was learned cannot undo it. */
  private learned = 0;

  /**
   * `stored` reads the head the preview's record holds now: every replica writes there the head
   * it let the preview take before handing the push over.
   */
  constructor(
    private readonly github: GitHubSource,
    readonly branch: string,
    sha: string,
    private readonly stored?: () => Promise<string | undefined>,
  ) {
    this.sha = sha;
  }

  get description(): string {
    return this.github.description;
  }

  /** The head the preview may run now. */
  get pinned(): string {
    return this.sha;
  }

  /** Any branch a pass asks for is the pull request's head: a preview tracks nothing else. */
  async head(_branch: string): Promise<string> {
    if (this.stale && this.stored) {
      const before = this.learned;
      // Unreadable now: the head held here stands, and the next pass reads the record again.
      const sha = await this.stored().catch(() => undefined);
      if (this.learned === before && sha !== undefined) {
        this.sha = sha;
        this.stale = false;
      }
    }
    return this.sha;
  }

  /**
   * The preview may run `sha` now: the manager checked it (a push on this replica), or the replica
   * that did handed it over through the preview's state.
   */
  learnHead(_branch: string, sha: string, _before?: string, title?: string): void {
    this.learned++;
    this.stale = false;
    this.sha = sha;
    this.github.learnTitle(sha, title);
  }

  /**
   * This replica takes the preview over: the head it was given may be older than one the last
   * holder was told of since, so the stored record is asked.
   */
  forgetHeads(): void {
    this.stale = true;
  }

  resolve(ref: string): Promise<string> {
    return this.github.resolve(ref);
  }

  tree(sha: string): Promise<string> {
    return this.github.tree(sha);
  }

  signatureProblem(sha: string): Promise<string | undefined> {
    return this.github.signatureProblem(sha);
  }

  commitTitle(sha: string): Promise<string | undefined> {
    return this.github.commitTitle(sha);
  }
}
