// GitHub-flavoured Markdown to HTML for the subset syncward writes (headings, paragraphs, lists,
// tables, fenced code, block quotes, rules, `<details>`, code spans, links, emphasis, escapes,
// entities and emoji shortcodes), rendered as GitHub's comment renderer does: a line break in a
// paragraph is a line break, a table row has its header's number of cells, raw HTML is kept only
// for the tags GitHub keeps. No Markdown package is a dependency of syncward: this one exists to
// draw the screenshots in docs/images and to check what a reader of a check run would see.

/** Raw HTML GitHub's sanitizer keeps, of the tags syncward (or a test) may write. */
const KEPT_TAG = /^<\/?(details|summary|sub|sup|b|i|br|kbd)\s*\/?>/i;
const COMMENT = /^<!--[\s\S]*?-->/;
/** A block of raw HTML starts with one of these (CommonMark's type 6 and 2), and ends at a blank line. */
const HTML_BLOCK = /^\s{0,3}(<\/?(details|summary|div|table|p)\b|<!--)/i;
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const DELIMITER_ROW = /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

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

/** The HTML of `markdown`, to be placed inside `<article class="markdown-body">`. */
export function gfmToHtml(markdown: string): string {
  return blocks(markdown.replace(/\r\n?/g, "\n").split("\n")).join("\n");
}

function blocks(lines: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence && !(fence[2]![0] === "`" && fence[3]!.includes("`"))) {
      const [, , marks, info] = fence;
      const body: string[] = [];
      i++;
      const closes = new RegExp(`^ {0,3}${marks![0] === "`" ? "`" : "~"}{${marks!.length},}\\s*$`);
      while (i < lines.length && !closes.test(lines[i]!)) body.push(lines[i++]!);
      i++;
      const lang = info!.trim().split(/\s+/)[0] ?? "";
      const cls = lang === "" ? "" : ` class="language-${escapeHtml(lang)}"`;
      out.push(
        `<pre${cls}><code>${body.map(escapeHtml).join("\n")}${body.length > 0 ? "\n" : ""}</code></pre>`,
      );
      continue;
    }
    if (HTML_BLOCK.test(line)) {
      const raw: string[] = [];
      // A comment ends with its `-->` line; any other block at a blank line.
      const comment = line.trim().startsWith("<!--");
      while (i < lines.length && lines[i]!.trim() !== "") {
        raw.push(lines[i++]!);
        if (comment && raw.at(-1)!.includes("-->")) break;
      }
      out.push(rawHtml(raw.join("\n")));
      continue;
    }
    const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^ {0,3}(-{3,}|\*{3,}|_{3,})\s*$/.test(line)) {
      out.push("<hr>");
      i++;
      continue;
    }
    if (line.includes("|") && DELIMITER_ROW.test(lines[i + 1] ?? "") && (lines[i + 1] ?? "").includes("-")) {
      const header = cells(line);
      const rows: string[][] = [];
      i += 2;
      while (
        i < lines.length &&
        lines[i]!.trim() !== "" &&
        lines[i]!.includes("|") &&
        !startsBlock(lines[i]!)
      )
        rows.push(cells(lines[i++]!));
      out.push(table(header, rows));
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i]!))
        quoted.push(lines[i++]!.replace(/^ {0,3}> ?/, ""));
      out.push(`<blockquote>\n${blocks(quoted).join("\n")}\n</blockquote>`);
      continue;
    }
    const item = listItem(line);
    if (item) {
      const items: string[][] = [];
      while (i < lines.length) {
        const next = listItem(lines[i]!);
        if (next && next.ordered === item.ordered) items.push([next.text]);
        else if (lines[i]!.trim() !== "" && items.length > 0 && !startsBlock(lines[i]!))
          items.at(-1)!.push(lines[i]!.trim());
        else break;
        i++;
      }
      const tag = item.ordered ? "ol" : "ul";
      out.push(`<${tag}>\n${items.map((t) => `<li>${paragraphText(t)}</li>`).join("\n")}\n</${tag}>`);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== "" && (para.length === 0 || !startsBlock(lines[i]!))) {
      // A line of dashes under a paragraph makes it a heading (setext), as on GitHub.
      if (para.length > 0 && /^ {0,3}-+\s*$/.test(lines[i]!)) {
        out.push(`<h2>${paragraphText(para)}</h2>`);
        para.length = 0;
        i++;
        break;
      }
      para.push(lines[i++]!.trim());
    }
    if (para.length > 0) out.push(`<p>${paragraphText(para)}</p>`);
  }
  return out;
}

function startsBlock(line: string): boolean {
  return (
    FENCE.test(line) ||
    HTML_BLOCK.test(line) ||
    /^ {0,3}(#{1,6}\s|>|(-{3,}|\*{3,})\s*$)/.test(line) ||
    listItem(line) !== undefined
  );
}

function listItem(line: string): { ordered: boolean; text: string } | undefined {
  const m = /^ {0,3}(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/.exec(line);
  if (!m) return undefined;
  return { ordered: m[2] !== undefined, text: m[3]! };
}

/** Lines of one paragraph: each line break kept, as GitHub shows comments and check runs. */
function paragraphText(lines: string[]): string {
  return lines.map((line) => inline(line)).join("<br>\n");
}

/** A row's cells, split on pipes that no backslash escapes (inside code spans too, as in GFM). */
export function cells(row: string): string[] {
  const inner = row
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
}

/** GFM's table: every row gets the header's cells, extra ones dropped, missing ones empty. */
function table(header: string[], rows: string[][]): string {
  const width = header.length;
  const row = (r: string[], tag: "th" | "td") =>
    `<tr>${Array.from({ length: width }, (_, k) => `<${tag}>${inline(r[k] ?? "")}</${tag}>`).join("")}</tr>`;
  return [
    "<table>",
    `<thead>${row(header, "th")}</thead>`,
    `<tbody>${rows.map((r) => row(r, "td")).join("\n")}</tbody>`,
    "</table>",
  ].join("\n");
}

/** A raw HTML block: the tags GitHub keeps, the rest escaped; Markdown after a tag on its line is inline. */
function rawHtml(text: string): string {
  return inline(text, true);
}

/** Inline Markdown: code spans, escapes, links, emphasis, entities, kept tags, emoji. */
export function inline(text: string, inHtmlBlock = false): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const rest = text.slice(i);
    if (c === "\\" && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      out += escapeHtml(text[i + 1]!);
      i += 2;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(rest)![0];
      const close = closingTicks(text, i + run.length, run.length);
      if (close < 0) {
        out += run;
        i += run.length;
        continue;
      }
      let code = text.slice(i + run.length, close).replace(/\n/g, " ");
      if (/^ .*[^ ].* $/.test(code) || /^ [^ ] $/.test(code)) code = code.slice(1, -1);
      out += `<code>${escapeHtml(code)}</code>`;
      i = close + run.length;
      continue;
    }
    if (c === "[") {
      const link = linkAt(text, i);
      if (link) {
        out += `<a href="${escapeHtml(link.url)}">${inline(link.label)}</a>`;
        i = link.end;
        continue;
      }
    }
    if (c === "*" || c === "_") {
      const emphasis = emphasisAt(text, i);
      if (emphasis) {
        const tag = emphasis.strong ? "strong" : "em";
        out += `<${tag}>${inline(emphasis.inner)}</${tag}>`;
        i = emphasis.end;
        continue;
      }
    }
    if (c === "<") {
      const kept = COMMENT.exec(rest) ?? KEPT_TAG.exec(rest);
      if (kept) {
        out += kept[0].startsWith("<!--") ? "" : kept[0];
        i += kept[0].length;
        continue;
      }
    }
    if (c === "&") {
      const entity = /^&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});/i.exec(rest);
      out += entity ? entity[0] : "&amp;";
      i += entity ? entity[0].length : 1;
      continue;
    }
    if (c === ":") {
      const emoji = /^:([a-z_]+):/.exec(rest);
      if (emoji && EMOJI[emoji[1]!]) {
        out += EMOJI[emoji[1]!];
        i += emoji[0].length;
        continue;
      }
    }
    if (c === "\n" && !inHtmlBlock) {
      out += "<br>\n";
      i++;
      continue;
    }
    out += escapeHtml(c);
    i++;
  }
  return out;
}

/** Where a run of exactly `n` backticks starts at or after `from`, or -1. */
function closingTicks(text: string, from: number, n: number): number {
  for (let j = text.indexOf("`", from); j >= 0; j = text.indexOf("`", j + 1)) {
    let run = 0;
    while (text[j + run] === "`") run++;
    if (run === n) return j;
    j += run - 1;
  }
  return -1;
}

/** Index just past the `]` that closes the `[` at `start` (code spans and escapes skipped), or -1. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  for (let j = start; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") j++;
    else if (c === "`") {
      let run = 0;
      while (text[j + run] === "`") run++;
      const close = closingTicks(text, j + run, run);
      j = close < 0 ? j + run - 1 : close + run - 1;
    } else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) return j;
  }
  return -1;
}

function linkAt(text: string, start: number): { label: string; url: string; end: number } | undefined {
  const close = closingBracket(text, start);
  if (close < 0 || text[close + 1] !== "(") return undefined;
  const dest = /^\(([^\s()<>]*)\)/.exec(text.slice(close + 1));
  if (!dest) return undefined;
  return { label: text.slice(start + 1, close), url: dest[1]!, end: close + 1 + dest[0].length };
}

/**
 * `**strong**`, `*em*` or `_em_` at `start`: the delimiter opens before a non-space and closes after
 * one, and an underscore neither opens nor closes inside a word (GFM's flanking rules, simplified).
 */
function emphasisAt(
  text: string,
  start: number,
): { strong: boolean; inner: string; end: number } | undefined {
  const mark = text[start]!;
  const strong = text[start + 1] === mark;
  const delim = strong ? mark + mark : mark;
  const after = text[start + delim.length] ?? "";
  if (after === "" || /\s/.test(after) || after === mark) return undefined;
  if (mark === "_" && start > 0 && /[\p{L}\p{N}]/u.test(text[start - 1]!)) return undefined;
  for (let j = start + delim.length; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") {
      j++;
      continue;
    }
    if (c === "`") {
      let run = 0;
      while (text[j + run] === "`") run++;
      const close = closingTicks(text, j + run, run);
      j = close < 0 ? j + run - 1 : close + run - 1;
      continue;
    }
    if (text.startsWith(delim, j) && text[j + delim.length] !== mark && !/\s/.test(text[j - 1] ?? " ")) {
      if (mark === "_" && /[\p{L}\p{N}]/u.test(text[j + 1] ?? "")) continue;
      return { strong, inner: text.slice(start + delim.length, j), end: j + delim.length };
    }
  }
  return undefined;
}
