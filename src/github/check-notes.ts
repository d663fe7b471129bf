// What a check run says when a sync could not run, the same words for an environment and for a
// pull request's preview environment (which differ only in what to do next).
import { fenced, inertInline } from "./markdown.ts";

/** The render failed: the problems annotate the files, the message shows whole. */
export function renderFailedCheck(
  e: { message: string; problems: Array<{ file?: string; line?: number; message: string }> },
  next: string,
) {
  return { problems: e.problems, note: `Render failed; nothing was applied.\n\n${fenced(e.message)}`, next };
}

/** The destination cluster is unknown or unreachable: nothing was read or applied. */
export function clusterUnavailableCheck(message: string, title: string, next?: string) {
  return {
    title: `${title}: ${message}`,
    note: `${inertInline(message)}. Nothing was read from or applied to that cluster.`,
    ...(next ? { next } : {}),
  };
}
