// The image cannot be built on the machines here (no container engine); what can be checked
// without one is that every file the Dockerfile copies from the build context is in it, that is,
// not excluded by .dockerignore (as Docker reads it: the last matching pattern wins, and a pattern
// matching a parent directory matches the files under it).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ROOT } from "../support/built.ts";

function patternRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*" && pattern[i + 1] === "*") {
      re += ".*";
      i++;
      if (pattern[i + 1] === "/") i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether Docker leaves `path` (relative to the context) out of the build context. */
function ignored(rules: string[], path: string): boolean {
  const parents = path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  let out = false;
  for (const rule of rules) {
    const negated = rule.startsWith("!");
    const re = patternRegex((negated ? rule.slice(1) : rule).replace(/^\/+|\/+$/g, ""));
    if (parents.some((p) => re.test(p))) out = !negated;
  }
  return out;
}

const rules = readFileSync(join(ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** Sources of the COPY instructions that read the build context (not another stage). */
function contextSources(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((l) => /^COPY\s/i.test(l.trim()) && !/--from=/.test(l))
    .flatMap((l) =>
      l
        .trim()
        .split(/\s+/)
        .slice(1)
        .filter((w) => !w.startsWith("--"))
        .slice(0, -1),
    );
}

describe("Dockerfile build context", () => {
  it("reads .dockerignore as Docker does", () => {
    const table: Array<[string, boolean]> = [
      ["src/kube/client.ts", false],
      ["tools/build.mjs", false],
      ["tools/cluster/cli.ts", true],
      ["test/unit/x.test.ts", true],
      ["src/certs/key.pem", true],
      ["node_modules/yaml/index.js", true],
    ];
    for (const [path, expected] of table) assert.equal(ignored(rules, path), expected, path);
  });

  it("has every file the Dockerfile copies from the context", () => {
    const sources = contextSources(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    assert.ok(sources.includes("tsconfig.build.json") && sources.includes("src"), `found ${sources}`);
    for (const source of sources) {
      const path = source.replace(/^\.\/|\/$/g, "");
      assert.ok(existsSync(join(ROOT, path)), `${path} exists`);
      assert.equal(ignored(rules, path), false, `${path} is left out of the build context by .dockerignore`);
    }
  });
});
