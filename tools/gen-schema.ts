// Writes schema/syncward.schema.json from the zod schema in src/config/schema.ts, formatted by
// biome like every other file in the repository.
//   node --import tsx tools/gen-schema.ts          write the file
//   node --import tsx tools/gen-schema.ts --check  exit 1 if the committed file is stale
// The check compares content, not formatting (test/unit/config/json-schema.test.ts does the same).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { buildJsonSchema, renderJsonSchema } from "../src/config/json-schema.ts";

const root = join(import.meta.dirname, "..");
const target = join(root, "schema", "syncward.schema.json");

if (process.argv.includes("--check")) {
  let current: unknown;
  try {
    current = JSON.parse(readFileSync(target, "utf8"));
  } catch {
    current = undefined; // missing or unreadable: stale
  }
  if (!isDeepStrictEqual(current, buildJsonSchema())) {
    process.stderr.write(`${target} is stale: run node --import tsx tools/gen-schema.ts\n`);
    process.exit(1);
  }
  process.stdout.write(`${target} is up to date\n`);
} else {
  writeFileSync(target, renderJsonSchema());
  const biome = spawnSync(join(root, "node_modules", ".bin", "biome"), ["format", "--write", target], {
    cwd: root,
    encoding: "utf8",
  });
  if (biome.status !== 0) process.stderr.write(`biome could not format ${target}:\n${biome.stderr}`);
  process.stdout.write(`wrote ${target}\n`);
}
