// The user documentation the docs tests read: README.md, docs/**/*.md, BENCHMARKS.md and
// RELIABILITY.md, as paths relative to the repository root.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..", "..");

export function userDocs(): string[] {
  const top = ["README.md", "BENCHMARKS.md", "RELIABILITY.md"].filter((f) => existsSync(join(ROOT, f)));
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => relative(ROOT, join(ROOT, "docs", f)));
  return [...top, ...docs.sort()];
}
