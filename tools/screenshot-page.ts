// One situation as a page the way GitHub frames it: a check run's conclusion and title above its
// output, or a comment box, in GitHub's 900 px column, in GitHub's Markdown stylesheet (the light
// theme of `.markdown-body`).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DROPPED, escapeHtml, gfmToHtml } from "./gfm-html.ts";

/** GitHub's content column, where check-run output and comments are shown. */
export const COLUMN_PX = 900;

export interface PageInput {
  kind: string;
  title?: string;
  conclusion?: string;
  markdown: string;
}

const CONCLUSION: Record<string, { icon: string; color: string; label: string }> = {
  success: { icon: "✓", color: "#1a7f37", label: "Success" },
  failure: { icon: "✕", color: "#d1242f", label: "Failure" },
  action_required: { icon: "!", color: "#9a6700", label: "Action required" },
  neutral: { icon: "–", color: "#59636e", label: "Neutral" },
};

/** GitHub's own Markdown stylesheet (light theme), as the `github-markdown-css` package ships it. */
const GITHUB_CSS = readFileSync(
  fileURLToPath(import.meta.resolve("github-markdown-css/github-markdown-light.css")),
  "utf8",
);

/** What surrounds the Markdown on GitHub: the column, and a check run's or comment's header. */
const FRAME_CSS = `
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: #1f2328; width: ${COLUMN_PX}px;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.frame { margin: 0; padding: 16px; }
.header { display: flex; align-items: center; gap: 10px; padding: 12px 16px; border: 1px solid #d1d9e0;
  border-bottom: 0; border-radius: 6px 6px 0 0; background: #f6f8fa; font-size: 14px; }
.header .icon { width: 22px; height: 22px; border-radius: 50%; color: #fff; font-weight: 700;
  display: inline-flex; align-items: center; justify-content: center; font-size: 13px; flex: none; }
.header .what { color: #59636e; }
.header .title { font-weight: 600; font-size: 16px; }
.markdown-body { border: 1px solid #d1d9e0; border-radius: 0 0 6px 6px; padding: 16px 24px; }
.${DROPPED} { color: #d1242f; text-decoration: line-through; }
`;

/** The page's HTML: a header (what it is, its conclusion and title) above the rendered Markdown. */
export function pageHtml(page: PageInput): string {
  const c = page.conclusion === undefined ? undefined : CONCLUSION[page.conclusion];
  const header = [
    c === undefined
      ? ""
      : `<span class="icon" style="background:${c.color}" title="${c.label}">${c.icon}</span>`,
    `<span class="what">${escapeHtml(page.kind)}${c === undefined ? "" : ` · ${c.label}`}</span>`,
    page.title === undefined ? "" : `<span class="title">${escapeHtml(page.title)}</span>`,
  ].join("");
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<style>${GITHUB_CSS}\n${FRAME_CSS}</style></head>`,
    `<body><div class="frame"><div class="header">${header}</div>`,
    `<article class="markdown-body">\n${gfmToHtml(page.markdown)}\n</article></div>`,
    // The page's height, read by the screenshot tool to size the window to the content.
    "<script>document.title = String(Math.ceil(document.querySelector('.frame').getBoundingClientRect().bottom));</script>",
    "</body></html>",
  ].join("\n");
}
