// When the commit an environment runs is no longer in its branch's history (a force push rewrote
// the branch, and GitHub no longer has the commit or it shares no history with the new one),
// GitHub's compare of it with the pending commit answers 404. There is then no range from the
// deployed commit. The range starts instead at the newest commit the environment ran before that
// GitHub can still compare with the pending one (counted from their merge base, so every commit
// the rewrite brought in counts, and whoever pushed them, the force push included); with none, an
// orphan history, nothing tells what is new, and no approval is accepted. While GitHub still has
// the old commit, the compare counts from the merge base of both.
import { short } from "../util/short-sha.ts";
import { statusOf } from "./github-errors.ts";
import { codeSpan } from "./markdown.ts";

/** `err` is GitHub's 404 for the compare of `base` with another commit: `base` is gone from the history. */
export function deployedCommitGone(err: unknown, base: string | undefined): boolean {
  if (base === undefined || statusOf(err) !== 404) return false;
  const url = (err as { request?: { url?: string } }).request?.url ?? "";
  return url.includes(`/compare/${base}...`);
}

/** What the approver reads when the range could not start at the deployed commit. */
export function rewrittenNote(
  env: string,
  deployed: string,
  earlier: string,
  pending: string,
  branch: string,
): string {
  return `**${env}** runs \`${short(deployed)}\`, which is no longer in the history of ${codeSpan(branch)} (a force push rewrote the branch), so the approval is judged on every commit since \`${short(earlier)}\`, which ${env} ran before and which shares history with \`${short(pending)}\`: whoever wrote, merged or pushed any of them, the force push included, does not approve.`;
}

/**
 * Revisions the environment ran before `gone`, newest first, that a range may start from instead:
 * each was deployed (so approved under the rules of its day), and GitHub's compare counts from the
 * merge base of it and the pending commit, so every commit the rewrite brought in is counted.
 */
export function earlierDeployed(
  history: ReadonlyArray<{ revision: string; result: string; dryRun?: boolean }>,
  gone: string,
  max = 5,
): string[] {
  const seen = new Set<string>([gone]);
  const out: string[] = [];
  for (const h of [...history].reverse()) {
    if (h.result !== "Succeeded" || h.dryRun || seen.has(h.revision) || !/^[0-9a-f]{40}$/.test(h.revision))
      continue;
    seen.add(h.revision);
    out.push(h.revision);
    if (out.length >= max) break;
  }
  return out;
}

/** The refusal when no deployed commit shares history with the pending one: nothing tells what is new. */
export function noSharedHistory(env: string, deployed: string, pending: string, branch: string): string {
  return `**${env}** runs \`${short(deployed)}\`, which is no longer in the history of ${codeSpan(branch)} (a force push rewrote the branch), and no commit ${env} ran before shares history with \`${short(pending)}\`, so nobody can tell which commits are new or who contributed them; an operator deploys it with \`syncward app sync ${env} --revision ${short(pending)}\`, or the environment sets approval.allowAuthor: true`;
}
