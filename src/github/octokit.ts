// The Octokit the GitHub layer talks through: an installation client from Probot.
import type { ProbotOctokit } from "probot";

export type Octokit = InstanceType<typeof ProbotOctokit>;

/** Returns an installation-authenticated client (tokens rotate; ask each time). */
export type OctokitFactory = () => Promise<Octokit>;

export interface RepoRef {
  owner: string;
  repo: string;
}
