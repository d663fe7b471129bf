// Glob patterns as Argo CD accepts them for ignoreDifferences group and kind: `*` matches any run
// of characters, `?` one character, everything else literally.

import { BoundedMap } from "../../util/bounded-map.ts";

/** Patterns come from every repository's config over the process's life: the newest 500 stay compiled. */
const cache = new BoundedMap<string, RegExp>(500);

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
