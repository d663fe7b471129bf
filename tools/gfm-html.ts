// GitHub-flavoured Markdown to HTML, as GitHub's comment renderer shows it: `marked` with GFM on
// (tables, strikethrough, autolinks) and `breaks` (a line break in a comment is a line break),
// then the two things GitHub adds around the Markdown: its HTML sanitizer (only a few tags pass)
// and emoji shortcodes. Used to draw the screenshots in docs/images and to check, in tests, what a
// reader of a check run or a reply would see. A development tool: syncward itself renders nothing.
import { Marked, type Tokens } from "marked";

/** Raw HTML GitHub's sanitizer keeps, of the tags syncward (or a test) may write. */
const KEPT_TAG = /^<(\/?)(details|summary|sub|sup|b|i|br|kbd)(\s+open)?\s*\/?>$/i;
const COMMENT = /<!--[\s\S]*?-->/g;
const TAG = /<\/?[A-Za-z][^<>]*>/g;

/** The shortcodes syncward writes; GitHub knows many more. */
const EMOJI: Record<string, string> = {
  warning: "⚠️",
  information_source: "ℹ️",
  rotating_light: "🚨",
  white_check_mark: "✅",
  x: "❌",
  lock: "🔒",
  hourglass: "⌛",
};

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** Marks a tag GitHub's sanitizer would drop (the text a test looks for). */
export const DROPPED = "gfm-dropped";

/**
 * Raw HTML after GitHub's sanitizer: comments go, allowed tags stay (without attributes other than
 * `open`), every other tag is shown as text in a marked span. GitHub drops those tags; showing
 * them keeps a test (and a screenshot) honest about user text that reached the Markdown raw.
 */
export function sanitize(html: string): string {
  return html.replace(COMMENT, "").replace(TAG, (tag) => {
    const kept = KEPT_TAG.exec(tag);
    if (!kept) return `<span class="${DROPPED}">${escapeHtml(tag)}</span>`;
    const [, close, name, open] = kept;
    return `<${close}${name!.toLowerCase()}${open ? " open" : ""}>`;
  });
}

const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: (token: Tokens.HTML | Tokens.Tag) => sanitize(token.text),
  },
  extensions: [
    {
      name: "emoji",
      level: "inline",
      start: (src: string) => src.indexOf(":"),
      tokenizer(src: string) {
        const match = /^:([a-z_]+):/.exec(src);
        const emoji = match && EMOJI[match[1]!];
        return emoji ? { type: "emoji", raw: match[0], emoji } : undefined;
      },
      renderer: (token) => String(token.emoji),
    },
  ],
});

/** The HTML of `text`, to be placed inside `<article class="markdown-body">`. */
export function gfmToHtml(text: string): string {
  return markdown.parse(text, { async: false });
}
