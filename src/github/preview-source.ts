// Where a preview's Reconciler reads its pull request's head: from what the preview manager told
// it (the head it let the preview take, after checking who pushed it), never from GitHub. A
// preview follows its pull request through `synchronize` webhooks and the sweep, so an idle
// preview asks GitHub nothing, and a head no check has let through (a push by someone without the
// template's permission) is never synced because a pass happened to read the branch.
import type { RevisionSource } from "../reconciler/revision-source.ts";
import type { GitHubSource } from "./github-source.ts";

export class PreviewSource implements RevisionSource {
  private sha: string;

  constructor(
    private readonly github: GitHubSource,
    readonly branch: string,
    sha: string,
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
    return this.sha;
  }

  /**
   * The preview may run `sha` now: the manager checked it (a push on this replica), or the replica
   * that did handed it over through the preview's state.
   */
  learnHead(_branch: string, sha: string, _before?: string, title?: string): void {
    this.sha = sha;
    this.github.learnTitle(sha, title);
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
