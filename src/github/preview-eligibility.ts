// Who gets a live preview, and when. Pure: the caller looks up permissions and pushers; this
// decides. A preview runs the pull request's code in a cluster with syncward's credentials, so it
// goes only to code people with write access to the repository wrote and pushed, and never to a
// fork's, whatever anyone comments or labels (a maintainer's /preview on a fork runs the fork).
import type { PreviewTemplate } from "../config/types.ts";
import { allows, type Permission } from "./authorize.ts";

/** What happened to the pull request, as far as previews are concerned. */
export type PreviewEvent =
  | { kind: "labeled" | "unlabeled"; label: string }
  | { kind: "opened" | "reopened" | "synchronize" }
  | { kind: "closed" }
  | { kind: "command"; stop: boolean; by: string; permission: Permission };

export interface PreviewPullFacts {
  /** The head is a branch of this repository (not a fork's). */
  sameRepository: boolean;
  author: string;
  authorPermission: Permission;
  /**
   * Everyone who put the head's commits there, with their permission: the author, the authors
   * and committers of its commits, whoever pushed a commit still in its history (GitHub's
   * activity of the branch) and the sender of the push being handled.
   */
  pushers: Array<{ login: string; permission: Permission }>;
  /**
   * What of the head's commits, or of who pushed them, GitHub did not show in full: the pushers
   * may be incomplete, so the head does not qualify.
   */
  unreadable?: string;
  labels: string[];
  /** The preview is live (or queued) now. */
  live: boolean;
}

export type PreviewDecision =
  | { action: "start" | "resync" | "none" }
  /**
   * A live preview whose pull request no longer qualifies (someone without the permission pushed
   * to it): it stays at the head it runs, and follows again once the head qualifies.
   */
  | { action: "hold"; reason: string }
  /** `reason`: the preview must end because the pull request no longer qualifies. */
  | { action: "stop"; reason?: string }
  | { action: "refuse"; reason: string };

/** What the event means for this template's preview of the pull request. */
export function previewDecision(
  template: PreviewTemplate,
  event: PreviewEvent,
  pr: PreviewPullFacts,
): PreviewDecision {
  if (event.kind === "closed") return { action: pr.live ? "stop" : "none" };
  // Asking (or asking to stop) needs the permission; a refused ask changes nothing.
  if (event.kind === "command" && !allows(event.permission, template.permission)) {
    return {
      action: "refuse",
      reason: `@${event.by} has ${event.permission} access; /preview needs ${template.permission} (previewEnvironments[].permission)`,
    };
  }
  const stop = wantsStop(template, event);
  if (stop) return { action: pr.live ? "stop" : "none" };
  if (!wantsStart(template, event, pr)) return { action: "none" };
  const refusal = refusalOf(template, pr);
  // A live preview whose branch someone without the permission pushed to stays where it is: the
  // new head would run their code. It follows again once no such commit is in the head's history.
  if (refusal) return pr.live ? { action: "hold", reason: refusal } : { action: "refuse", reason: refusal };
  return { action: pr.live ? "resync" : "start" };
}

function wantsStop(template: PreviewTemplate, event: PreviewEvent): boolean {
  if (event.kind === "command") return event.stop;
  return template.trigger === "label" && event.kind === "unlabeled" && event.label === template.label;
}

function wantsStart(template: PreviewTemplate, event: PreviewEvent, pr: PreviewPullFacts): boolean {
  switch (event.kind) {
    case "command":
      return true; // `/preview` asks for one whatever the trigger
    case "labeled":
      return template.trigger === "label" && event.label === template.label;
    case "synchronize":
      // A push moves a live preview; with trigger always (or the label on) it starts one too.
      return (
        pr.live ||
        template.trigger === "always" ||
        (template.trigger === "label" && pr.labels.includes(template.label))
      );
    case "opened":
    case "reopened":
      return (
        template.trigger === "always" || (template.trigger === "label" && pr.labels.includes(template.label))
      );
    default:
      return false;
  }
}

/** Why this pull request may not have a preview, or undefined. */
export function refusalOf(template: PreviewTemplate, pr: PreviewPullFacts): string | undefined {
  if (!pr.sameRepository) {
    return "pull requests from forks never get a live preview: their code would run with this repository's cluster access. The diff preview in the check run still shows what would change";
  }
  const need = template.permission;
  if (!allows(pr.authorPermission, need)) {
    return `the author @${pr.author} has ${pr.authorPermission} access; a preview needs ${need} for the author and everyone who pushed to the branch`;
  }
  const short = pr.pushers.filter((p) => !allows(p.permission, need));
  if (short.length > 0) {
    const who = short.map((p) => `@${p.login} (${p.permission})`).join(", ");
    return `commits on the branch were pushed or written by ${who}; a preview needs ${need} access for everyone who pushed to it`;
  }
  if (pr.unreadable) {
    return `syncward could not tell everyone who pushed to the branch (${pr.unreadable}); a preview needs ${need} access for everyone who pushed to it`;
  }
  return undefined;
}
