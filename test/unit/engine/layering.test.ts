// The verbs of the engine must not import the module that calls them (sync.ts): shared types live
// in types.ts, so each verb can be read, tested and changed without its caller.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const ENGINE = join(import.meta.dirname, "../../../src/engine");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

test("no engine module but sync.ts itself imports sync.ts", () => {
  const offenders = sources(ENGINE).filter(
    (f) => !f.endsWith("/sync.ts") && /from "(\.\.?\/)+(engine\/)?sync\.ts"/.test(readFileSync(f, "utf8")),
  );
  assert.deepEqual(offenders, []);
});
