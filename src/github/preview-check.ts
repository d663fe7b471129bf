// The check run of a preview environment on its pull request's head commit, named like an
// environment's (`syncward / pr-<number>-<env>`) and carrying the same summary: the reporter's
// check-run code, given the preview's Reconciler, writes it. In progress when a sync starts,
// completed with the sync's result; one per head commit, since the reporter keeps one run per
// (environment, commit). Deployments and the comment stay preview-report.ts's (transient ones).
import type { Logger } from "../reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../reconciler/events.ts";
import type { Reconciler } from "../reconciler/reconciler.ts";
import { clusterUnavailableCheck, renderFailedCheck } from "./check-notes.ts";
import type { Octokit, OctokitFactory, RepoRef } from "./octokit.ts";
import { GitHubReporter } from "./reporter.ts";

/** The check-run writer of one preview: no buttons, GitHub failures thrown to the caller. */
export function previewChecks(o: {
  repo: RepoRef;
  htmlUrl: string;
  octokit: OctokitFactory;
  reconciler: Reconciler;
  log: Logger;
}): GitHubReporter {
  return new GitHubReporter({ ...o, buttons: false });
}

/** Tells the preview's check run what the sync `e` did; events that end nothing change nothing. */
export async function reportPreviewCheck(
  checks: GitHubReporter,
  gh: Octokit,
  e: ReconcilerEvent,
): Promise<void> {
  switch (e.type) {
    case "syncStarted":
      return checks.checkStarted(gh, e.env, e.revision, `syncing ${e.changes} change(s)`, e.planned ?? []);
    case "synced":
      await checks.check(gh, e.env, e.revision, { result: e.outcome });
      return;
    case "selfHealed":
      await checks.check(gh, e.env, e.revision, { result: e.outcome, reverted: e.reverted });
      return;
    // A push that changes nothing the preview deploys is still the head the preview runs.
    case "unchanged":
      await checks.check(gh, e.env, e.revision, {
        title: "Synced: nothing to change",
        note: "This commit renders what the preview already runs; nothing was applied.",
        conclusion: "success",
      });
      return;
    case "renderError":
      await checks.check(
        gh,
        e.env,
        e.revision,
        renderFailedCheck(
          e,
          "fix the render error above and push to the pull request: the preview tries again.",
        ),
      );
      return;
    // Unlike an environment's, a preview that cannot reach its cluster is not running the head.
    case "clusterUnavailable":
      await checks.check(gh, e.env, e.revision, {
        ...clusterUnavailableCheck(e.message, "Failed"),
        conclusion: "failure",
      });
      return;
    default:
      return;
  }
}
