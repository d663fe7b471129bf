// Glob patterns as Argo CD accepts them for ignoreDifferences group and kind: `*` matches any run
// of characters, `?` one character, everything else literally.

const cache = new Map<string, RegExp>();

export function globMatch(pattern: string, text: string): boolean {
  if (!pattern.includes("*") && !pattern.includes("?")) return pattern === text;
  let re = cache.get(pattern);
  if (!re) {
    const source = pattern
      .split("")
      .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${source}$`, "s");
    cache.set(pattern, re);
  }
  return re.test(text);
}
