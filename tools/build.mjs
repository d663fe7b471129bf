// `npm run build`: compiles src/ into dist/ with tsc and records the commit the build came from
// (SYNCWARD_COMMIT, else `git rev-parse HEAD`) in dist/build-info.json for `syncward --version`
// and `syncward_build_info`. Plain JavaScript, so it needs nothing but Node and TypeScript.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const root = new URL("../", import.meta.url);
rmSync(new URL("dist", root), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });

function commit() {
  if (process.env.SYNCWARD_COMMIT) return process.env.SYNCWARD_COMMIT;
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "unknown";
  }
}
writeFileSync(new URL("dist/build-info.json", root), `${JSON.stringify({ commit: commit() })}\n`);
