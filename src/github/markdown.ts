// Showing text someone else wrote (a comment's command line, a reason, a manifest's content) in a
// comment or check run as inert text: it must not close the code span or fence it sits in, and so
// turn into markdown, HTML or @-mentions, and it must not hide characters that change what a reader
// sees (zero-width joiners, right-to-left overrides).

/** Control characters but the tab, format characters (Cf) and line/paragraph separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const INVISIBLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Whether `text` holds a character a reader cannot see (or that reorders what they see). */
export function hasInvisible(text: string): boolean {
  return new RegExp(INVISIBLE.source, "u").test(text);
}

/** `text` with every invisible character written out as `\u{202e}`. */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u{${c.codePointAt(0)!.toString(16).padStart(4, "0")}}`);
}

/** At most `max` characters (code points, so no surrogate pair is cut), with `…` when cut. */
export function clipChars(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/**
 * An inline code span showing `text` literally: invisible characters written out, at most `max`
 * characters, delimited by a backtick run longer than any inside (CommonMark), so nothing in it
 * renders as markdown, HTML or a mention.
 */
export function codeSpan(text: string, max = 100): string {
  const shown = clipChars(showInvisible(text), max);
  let longest = 0;
  for (const m of shown.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const ticks = "`".repeat(longest + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") || shown.trim() === "" ? " " : "";
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

/** A code fence longer than any backtick run in `body`, so the body cannot close it. */
export function fenceFor(body: string): string {
  let longest = 0;
  for (const m of body.matchAll(/`{3,}/g)) longest = Math.max(longest, m[0].length);
  return "`".repeat(Math.max(3, longest + 1));
}

/** `body` in a fenced code block (with an info string such as `diff`) that it cannot break out of. */
export function fenced(body: string, info = ""): string {
  const fence = fenceFor(body);
  return `${fence}${info}\n${body.replace(/\n+$/, "")}\n${fence}`;
}

/** `text` with `&`, `<` and `>` as entities, so it shows as written instead of rendering as HTML. */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * `@name` or `@org/team` where GitHub would notify someone: after a non-word character, as
 * GitHub's mention filter reads them.
 */
const MENTION = /(?<![A-Za-z0-9_])@[A-Za-z0-9][A-Za-z0-9-]*(?:\/[A-Za-z0-9][\w.-]*)?/g;

/**
 * `text` as plain inline text: `&`, `<` and `>` as entities, backslashes, backticks, brackets and
 * emphasis marks escaped (so it opens no code span, link, image or emphasis of its own) and every
 * would-be @-mention in a code span, where GitHub neither links
 * nor notifies it. (An entity such as `&#64;` is not enough: it is decoded before mentions are
 * looked for.)
 */
export function inertInline(text: string): string {
  // The backslash first (or `\\\`` would leave a live backtick), then what opens a code span, a
  // link or an image (`[text](url)` in a status message would be a live link), or emphasis.
  const plain = (t: string) => escapeHtml(t).replace(/[\\`[\]*_~]/g, (c) => `\\${c}`);
  let out = "";
  let last = 0;
  for (const m of text.matchAll(MENTION)) {
    out += `${plain(text.slice(last, m.index))}${codeSpan(m[0])}`;
    last = m.index + m[0].length;
  }
  return out + plain(text.slice(last));
}

/** A markdown table cell: no pipes, no newlines, no raw HTML, no mentions, about `max` characters. */
export function tableCell(text: string, max = 300): string {
  return inertInline(clipChars(text, max))
    .replace(/\r?\n|\r/g, " ")
    .replaceAll("|", "\\|");
}

/**
 * Free text someone else wrote (a sync message with a freeze reason, object names, API-server
 * output) in a reply: a code span when it fits on one line, else a fenced block of its own.
 */
export function inertText(text: string, max = 4000): string {
  const clipped = clipChars(text.replace(/\s+$/, ""), max);
  if (/[\r\n]/.test(clipped) || Array.from(clipped).length > 300) return `\n\n${fenced(clipped)}\n`;
  return codeSpan(clipped, 300);
}
