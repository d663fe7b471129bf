// What a preview tells GitHub: one comment on the pull request, edited in place as the preview
// moves (so a busy pull request does not fill with bot comments), and a transient GitHub
// deployment per head commit with the preview's URL.
import type { PreviewRecord } from "../state/preview-store.ts";
import { codeSpan } from "./markdown.ts";
import type { Octokit, RepoRef } from "./octokit.ts";

export type PreviewState =
  /** `next`: what comes next (default: it starts when a preview ends); position 0: not known. */
  | { kind: "queued"; position: number; reason: string; next?: string }
  | { kind: "deploying" }
  | { kind: "live"; message: string }
  | { kind: "failed"; message: string }
  | { kind: "tearingDown"; waiting?: string }
  | { kind: "gone"; why: string };

export function previewCommentBody(
  record: PreviewRecord,
  name: string,
  state: PreviewState,
  url?: string,
): string {
  const at = codeSpan(record.head.sha.slice(0, 7));
  const line = (() => {
    switch (state.kind) {
      case "queued":
        return `**Queued**${state.position > 0 ? ` (position ${state.position})` : ""}: ${state.reason}. ${state.next ?? "It starts when a preview ends."}`;
      case "deploying":
        return `**Deploying** ${at}…`;
      case "live":
        return `**Live** at ${at}: ${state.message}.`;
      case "failed":
        return `**Failed** at ${at}: ${state.message}. The next push tries again.`;
      case "tearingDown":
        return `**Tearing down**${state.waiting ? `: waiting for ${state.waiting}` : "…"}`;
      case "gone":
        return `**Torn down** (${state.why}). Namespace ${codeSpan(record.namespace)} is deleted.`;
    }
  })();
  const link = url && state.kind !== "gone" ? `\n\n${url}` : "";
  // A push the preview does not follow is said for as long as it does not, whatever else happens.
  const held =
    record.held && state.kind !== "gone" && state.kind !== "tearingDown"
      ? `\n\n**Not following** the push of ${codeSpan(record.held.sha.slice(0, 7))}: ${record.held.reason}. ` +
        `The preview stays at ${at}; it follows the pull request again once no such commit is in its head's history.`
      : "";
  return [
    `<!-- syncward-preview ${record.key} -->`,
    `#### Preview environment ${codeSpan(name)}`,
    "",
    `${line}${held}${link}`,
    "",
    `Namespace ${codeSpan(record.namespace)}, branch ${codeSpan(record.head.branch, 120)}. ` +
      "Comment `/preview stop` to end it; it ends by itself when the pull request closes.",
  ].join("\n");
}

/** Creates the preview's comment, or edits it in place; returns its id. */
export async function upsertPreviewComment(
  gh: Octokit,
  repo: RepoRef,
  record: PreviewRecord,
  body: string,
): Promise<number> {
  if (record.commentId !== undefined) {
    try {
      await gh.rest.issues.updateComment({ ...repo, comment_id: record.commentId, body });
      return record.commentId;
    } catch (err) {
      // Someone deleted it: a new one takes its place.
      if ((err as { status?: number }).status !== 404) throw err;
    }
  }
  const { data } = await gh.rest.issues.createComment({ ...repo, issue_number: record.pull, body });
  return data.id;
}

/** A transient deployment of `sha` to the preview's environment; returns its id. */
export async function createPreviewDeployment(
  gh: Octokit,
  repo: RepoRef,
  name: string,
  sha: string,
): Promise<number> {
  const { data } = await gh.rest.repos.createDeployment({
    ...repo,
    ref: sha,
    environment: name,
    auto_merge: false,
    required_contexts: [],
    production_environment: false,
    transient_environment: true,
    description: `syncward preview ${name}`,
    payload: { syncward: { preview: name } },
  });
  if (!("id" in data)) throw new Error(`GitHub did not create a deployment of ${sha} to ${name}`);
  return data.id;
}

export async function previewDeploymentStatus(
  gh: Octokit,
  repo: RepoRef,
  id: number,
  state: "in_progress" | "success" | "failure" | "inactive",
  description: string,
  url?: string,
): Promise<void> {
  await gh.rest.repos.createDeploymentStatus({
    ...repo,
    deployment_id: id,
    state,
    description: description.replace(/\s+/g, " ").slice(0, 139),
    ...(url && state !== "inactive" ? { environment_url: url } : {}),
    // Earlier deployments of the same preview go inactive when a newer one succeeds.
    auto_inactive: true,
  });
}
