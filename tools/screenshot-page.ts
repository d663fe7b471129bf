// One situation as a page the way GitHub frames it: a check run's conclusion and title above its
// output, or a comment box, in GitHub's 900 px column, styled after GitHub's Markdown stylesheet
// (the light theme of `.markdown-body`: fonts, tables, code, headings).
import { escapeHtml, gfmToHtml } from "./gfm-html.ts";

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

const CSS = `
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
.markdown-body { border: 1px solid #d1d9e0; border-radius: 0 0 6px 6px; padding: 16px 24px;
  font-size: 14px; line-height: 1.5; word-wrap: break-word; }
.markdown-body > :first-child { margin-top: 0 !important; }
.markdown-body > :last-child { margin-bottom: 0 !important; }
.markdown-body p, .markdown-body ul, .markdown-body ol, .markdown-body table, .markdown-body pre,
.markdown-body blockquote, .markdown-body details { margin-top: 0; margin-bottom: 16px; }
.markdown-body h1, .markdown-body h2, .markdown-body h3, .markdown-body h4 { margin-top: 24px;
  margin-bottom: 16px; font-weight: 600; line-height: 1.25; }
.markdown-body h2 { font-size: 1.5em; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0b3; }
.markdown-body h3 { font-size: 1.25em; }
.markdown-body h4 { font-size: 1em; }
.markdown-body a { color: #0969da; text-decoration: none; }
.markdown-body ul, .markdown-body ol { padding-left: 2em; }
.markdown-body li + li { margin-top: .25em; }
.markdown-body hr { height: .25em; padding: 0; margin: 24px 0; background: #d1d9e0; border: 0; }
.markdown-body code { padding: .2em .4em; margin: 0; font-size: 85%; white-space: break-spaces;
  background: #818b981f; border-radius: 6px;
  font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; }
.markdown-body a code { color: #0969da; }
.markdown-body pre { padding: 16px; overflow: auto; font-size: 85%; line-height: 1.45;
  background: #f6f8fa; border-radius: 6px; }
.markdown-body pre code { padding: 0; background: transparent; font-size: 100%; white-space: pre; }
.markdown-body table { display: block; width: max-content; max-width: 100%; overflow: auto;
  border-spacing: 0; border-collapse: collapse; }
.markdown-body table th { font-weight: 600; }
.markdown-body table th, .markdown-body table td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body table tr { background: #ffffff; border-top: 1px solid #d1d9e0b3; }
.markdown-body table tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; margin-left: 0; }
.markdown-body summary { cursor: pointer; }
.markdown-body sub { font-size: 75%; color: #59636e; }
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
    `<style>${CSS}</style></head>`,
    `<body><div class="frame"><div class="header">${header}</div>`,
    `<article class="markdown-body">\n${gfmToHtml(page.markdown)}\n</article></div>`,
    // The page's height, read by the screenshot tool to size the window to the content.
    "<script>document.title = String(Math.ceil(document.querySelector('.frame').getBoundingClientRect().bottom));</script>",
    "</body></html>",
  ].join("\n");
}
