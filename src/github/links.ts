// Links a reader follows from a check run or comment: commits (with their titles when known),
// pull requests, history revisions and the environment's own URL. Without the repository's web
// URL (a test, the CLI) they degrade to code spans, so the text reads the same either way.
import { codeSpan, inertInline, showInvisible, tableCell } from "./markdown.ts";

export interface Links {
  /** The repository's web URL, e.g. `https://github.com/acme/shop` (from webhook payloads). */
  repoUrl?: string;
  /** Commit titles by full SHA, where known (the approval range, the pull request). */
  titles?: Readonly<Record<string, string>>;
  /** The pull request a commit was merged from, by full SHA, where known. */
  pulls?: Readonly<Record<string, number>>;
}

const HEX_REVISION = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/** A full commit SHA as its 7-character short form; anything else (a tag, a branch) as given. */
export function shortSha(revision: string): string {
  return HEX_REVISION.test(revision) ? revision.slice(0, 7) : revision;
}

/** `url` when it is http(s), with the characters that would end a Markdown link destination escaped. */
export function safeUrl(url: string | undefined): string | undefined {
  if (url === undefined || !/^https?:\/\/[^\s]+$/i.test(url.trim())) return undefined;
  return url
    .trim()
    .replaceAll("(", "%28")
    .replaceAll(")", "%29")
    .replaceAll("<", "%3C")
    .replaceAll(">", "%3E")
    .replaceAll("|", "%7C")
    .replaceAll("`", "%60");
}

function repoBase(links: Links | undefined): string | undefined {
  return safeUrl(links?.repoUrl?.replace(/\/+$/, ""));
}

/**
 * A commit as a link: [`a1b2c3d`](…/commit/<sha>), then its title when known and `withTitle`.
 * `cell` makes the title safe for a table cell.
 */
export function commitLink(
  sha: string,
  links: Links | undefined,
  options: { withTitle?: boolean; cell?: boolean; title?: string; full?: boolean } = {},
): string {
  const base = repoBase(links);
  const label = codeSpan(options.full ? sha : shortSha(sha));
  const linked =
    base !== undefined && /^[0-9a-f]{7,64}$/i.test(sha) ? `[${label}](${base}/commit/${sha})` : label;
  const title = options.title ?? links?.titles?.[sha];
  const pull = options.withTitle ? links?.pulls?.[sha] : undefined;
  const from = pull === undefined ? "" : ` (${pullLink(pull, links)})`;
  if (!options.withTitle || title === undefined || title.trim() === "") return `${linked}${from}`;
  // Written by whoever committed: a right-to-left override or zero-width character is shown, not obeyed.
  const first = showInvisible(title.split(/\r?\n/, 1)[0]!.trim());
  return `${linked} ${options.cell ? tableCell(first, 60) : inertInline(clip(first, 72))}${from}`;
}

/** A pull request as a link: [#12](…/pull/12). */
export function pullLink(number: number, links: Links | undefined): string {
  const base = repoBase(links);
  return base === undefined ? `#${number}` : `[#${number}](${base}/pull/${number})`;
}

/** A link to the repository's file at a revision (history, config), or the code span alone. */
export function environmentLink(label: string, url: string | undefined): string {
  const safe = safeUrl(url);
  return safe === undefined ? label : `[${label}](${safe})`;
}

function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join("")}…`;
}
