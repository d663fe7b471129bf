// Tests that spawn syncward as a user runs it (bin/syncward.js, `npm start`) run the compiled
// dist/; this builds it first when it is missing or older than any file in src/.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

export function ensureBuilt(): void {
  const stamp = join(ROOT, "dist", "build-info.json");
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newest(join(ROOT, "src"))) return;
  execFileSync(process.execPath, [join(ROOT, "tools", "build.mjs")], { cwd: ROOT, stdio: "inherit" });
}
