// GitHub's anchors for Markdown headings, so generated docs can link into themselves and the link
// test can check `file.md#anchor` links the way GitHub resolves them.

/** A heading's text as GitHub shows it: links keep their text, code spans their content, HTML tags go. */
export function headingText(markdown: string): string {
  return markdown
    .replace(/(`+)(.*?)\1/g, (_, _fence: string, code: string) => code.replace(/[<>]/g, ""))
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim();
}

/**
 * GitHub's slug of a heading (github-slugger's rules): lower case, every character that is not a
 * letter, mark, digit, connector (_), space or hyphen dropped, each space a hyphen.
 */
export function githubSlug(heading: string): string {
  return headingText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a document's headings, with GitHub's -1, -2 suffixes for repeated headings. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(markdown).split("\n")) {
    const m = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[2]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The document with fenced code blocks blanked (lines kept, so line numbers still match). */
export function withoutCode(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split("\n")
    .map((line) => {
      const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = undefined;
        return "";
      }
      if (m) {
        fence = m[1];
        return "";
      }
      return line;
    })
    .join("\n");
}
