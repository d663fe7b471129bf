// Writes schema/syncward.schema.json (the repository config) and schema/syncward-projects.schema.json
// (the operator's projects) from their zod schemas, formatted by biome like every other file.
//   node --import tsx tools/gen-schema.ts          write the files
//   node --import tsx tools/gen-schema.ts --check  exit 1 if a committed file is stale
// The check compares content, not formatting (test/unit/config/json-schema.test.ts does the same).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { buildJsonSchema } from "../src/config/json-schema.ts";
import { buildProjectsJsonSchema } from "../src/projects/json-schema.ts";

const root = join(import.meta.dirname, "..");
const targets: Array<[string, () => Record<string, unknown>]> = [
  [join(root, "schema", "syncward.schema.json"), buildJsonSchema],
  [join(root, "schema", "syncward-projects.schema.json"), buildProjectsJsonSchema],
];

if (process.argv.includes("--check")) {
  let stale = false;
  for (const [target, build] of targets) {
    let current: unknown;
    try {
      current = JSON.parse(readFileSync(target, "utf8"));
    } catch {
      current = undefined; // missing or unreadable: stale
    }
    if (!isDeepStrictEqual(current, build())) {
      process.stderr.write(`${target} is stale: run node --import tsx tools/gen-schema.ts\n`);
      stale = true;
    } else process.stdout.write(`${target} is up to date\n`);
  }
  if (stale) process.exit(1);
} else {
  for (const [target, build] of targets) {
    writeFileSync(target, `${JSON.stringify(build(), null, 2)}\n`);
    const biome = spawnSync(join(root, "node_modules", ".bin", "biome"), ["format", "--write", target], {
      cwd: root,
      encoding: "utf8",
    });
    if (biome.status !== 0) process.stderr.write(`biome could not format ${target}:\n${biome.stderr}`);
    process.stdout.write(`wrote ${target}\n`);
  }
}
