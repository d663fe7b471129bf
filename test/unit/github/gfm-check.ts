// A structural check of GitHub-flavoured Markdown as GitHub would render it (no parser package
// is installed): code fences close, tables keep one column count, code spans are balanced, no
// raw HTML but the few tags syncward writes, no live @-mention but those allowed, and every commit
// SHA printed is the text of a link.

export interface GfmProblem {
  line: number;
  problem: string;
  text: string;
}

const ALLOWED_TAGS = /^<\/?(details|summary|sub)>$|^<!-- [\w:.-]+ -->$/;
/** A SHA-looking token: 7 to 40 hex digits with at least one letter (plain numbers are counts). */
const SHA = /(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z])/g;
const MENTION = /(?<![A-Za-z0-9_`])@[A-Za-z0-9][A-Za-z0-9-]*(?:\/[A-Za-z0-9][\w.-]*)?/g;

/** Cells of a table row, split on unescaped pipes (GFM splits inside code spans too). */
export function cellsOf(row: string): string[] {
  const inner = row
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/);
}

/** `line` with code spans blanked (their content is literal), or undefined when one is unclosed. */
function withoutCodeSpans(line: string): string | undefined {
  const plain = line.replaceAll("\\`", "  ");
  let out = "";
  let i = 0;
  while (i < plain.length) {
    if (plain[i] !== "`") {
      out += plain[i];
      i++;
      continue;
    }
    let run = 0;
    while (plain[i + run] === "`") run++;
    const ticks = "`".repeat(run);
    let close = -1;
    for (let j = plain.indexOf(ticks, i + run); j >= 0; j = plain.indexOf(ticks, j + 1)) {
      if (plain[j - 1] !== "`" && plain[j + run] !== "`") {
        close = j;
        break;
      }
    }
    if (close < 0) return undefined;
    out += " ".repeat(close + run - i).replace(/^ /, "C");
    i = close + run;
  }
  return out;
}

/** Problems found in `markdown`; `mentions` lists the mentions written on purpose. */
export function checkGfm(markdown: string, mentions: string[] = []): GfmProblem[] {
  const problems: GfmProblem[] = [];
  const lines = markdown.split("\n");
  let fence: string | undefined;
  let table: number | undefined;
  for (const [n, line] of lines.entries()) {
    const report = (problem: string) => problems.push({ line: n + 1, problem, text: line });
    const trimmed = line.trim();
    if (fence !== undefined) {
      if (new RegExp(`^${fence[0]}{${fence.length},}$`).test(trimmed)) fence = undefined;
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(trimmed);
    if (open) {
      fence = open[1];
      table = undefined;
      continue;
    }
    if (table !== undefined) {
      if (!trimmed.startsWith("|")) table = undefined;
      else if (cellsOf(line).length !== table)
        report(`row has ${cellsOf(line).length} cells, header ${table}`);
    } else if (trimmed.startsWith("|") && /^\|( *:?-{3,}:? *\|)+$/.test(lines[n + 1]?.trim() ?? "")) {
      table = cellsOf(line).length;
      if (cellsOf(lines[n + 1]!).length !== table) report("delimiter row does not match the header");
    }
    const spanless = withoutCodeSpans(line);
    if (spanless === undefined) {
      report("unclosed code span");
      continue;
    }
    for (const tag of spanless.matchAll(/<[^>]*>?/g))
      if (!ALLOWED_TAGS.test(tag[0])) report(`raw HTML ${tag[0]}`);
    const unlinked = spanless.replace(/\[[^\]]*\]\([^)]*\)/g, " ");
    for (const m of unlinked.matchAll(MENTION))
      if (!mentions.includes(m[0].replace(/\.+$/, ""))) report(`live mention ${m[0]}`);
    // A SHA inside a code span is still printed: check the line with spans, links removed.
    const linkless = line.replace(/\[(`+)[^`]*\1\]\([^)]*\)/g, " ").replace(/\]\([^)]*\)/g, "] ");
    for (const m of linkless.matchAll(SHA)) report(`commit ${m[0]} is not linked`);
  }
  if (fence !== undefined) problems.push({ line: lines.length, problem: "unclosed code fence", text: "" });
  const opened = markdown.split("<details>").length;
  const closed = markdown.split("</details>").length;
  if (opened !== closed) problems.push({ line: lines.length, problem: "unbalanced <details>", text: "" });
  return problems;
}
