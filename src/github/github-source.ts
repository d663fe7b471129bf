// Revisions from GitHub: a branch head through the API (or from a push payload just received, so
// a push costs no extra call), and trees from the repository tarball, cached by SHA.

import type { RevisionSource } from "../reconciler/revision-source.ts";
import { fetchGitHubTree } from "../source/github-tarball.ts";
import type { OctokitFactory, RepoRef } from "./octokit.ts";

const FULL_SHA = /^[0-9a-f]{40}$/;
/** How long a head learned from a webhook is trusted before asking the API again. */
const HINT_TTL_MS = 60_000;

export class GitHubSource implements RevisionSource {
  private readonly hints = new Map<string, { sha: string; at: number }>();

  constructor(
    private readonly ref: RepoRef,
    private readonly octokit: OctokitFactory,
    private readonly cacheDir: string,
  ) {}

  get description(): string {
    return `${this.ref.owner}/${this.ref.repo}`;
  }

  /** A push payload told us where `branch` is now. */
  learnHead(branch: string, sha: string): void {
    this.hints.set(branch, { sha, at: Date.now() });
  }

  async head(branch: string): Promise<string> {
    const hint = this.hints.get(branch);
    if (hint && Date.now() - hint.at < HINT_TTL_MS) return hint.sha;
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.ref, branch });
    this.learnHead(branch, data.commit.sha);
    return data.commit.sha;
  }

  async resolve(ref: string): Promise<string> {
    if (FULL_SHA.test(ref)) return ref;
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getCommit({ ...this.ref, ref });
    return data.sha;
  }

  async tree(sha: string): Promise<string> {
    return fetchGitHubTree(await this.octokit(), { ...this.ref, sha }, this.cacheDir);
  }
}
