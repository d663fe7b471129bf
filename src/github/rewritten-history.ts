// When the commit an environment runs is no longer in its branch's history (a force push rewrote
// the branch, and GitHub no longer has the commit or it shares no history with the new one),
// GitHub's compare of it with the pending commit answers 404. There is then no range from the
// deployed commit: the pending commit is approved as a whole new release (what it renders in
// full, with the contributors of a first deployment: its own commit, its pull requests, who
// pushed it and who asked for the sync). While GitHub still has the old commit, the compare
// counts from the merge base of both, so every commit the rewrite brought in counts.
import { statusOf } from "./github-errors.ts";

const short = (sha: string) => sha.slice(0, 7);

/** `err` is GitHub's 404 for the compare of `base` with another commit: `base` is gone from the history. */
export function deployedCommitGone(err: unknown, base: string | undefined): boolean {
  if (base === undefined || statusOf(err) !== 404) return false;
  const url = (err as { request?: { url?: string } }).request?.url ?? "";
  return url.includes(`/compare/${base}...`);
}

/** What the approver reads when the range could not start at the deployed commit. */
export function rewrittenNote(env: string, deployed: string, pending: string, branch: string): string {
  return `**${env}** runs \`${short(deployed)}\`, which is no longer in the history of \`${branch}\` (a force push rewrote the branch), so there are no commits to count from it: an approval covers \`${short(pending)}\` as a whole new release (everything it renders) and is judged as a first deployment is (its commit, its pull requests, who pushed it).`;
}
