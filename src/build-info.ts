// The version and commit a build reports (`syncward --version`, `syncward_build_info`). The
// commit is written into build-info.json by `npm run build` (or the image build's SYNCWARD_COMMIT);
// a checkout run from source asks git.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

export interface BuildInfo {
  version: string;
  commit: string;
}

let cached: BuildInfo | undefined;

function readJson(url: URL): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function gitCommit(root: URL): string | undefined {
  if (!existsSync(new URL(".git", root))) return undefined;
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  // src/build-info.ts and dist/build-info.js both sit one directory below the package root.
  const root = new URL("../", import.meta.url);
  const version = readJson(new URL("package.json", root))?.version;
  const built = readJson(new URL("build-info.json", import.meta.url))?.commit;
  const commit =
    process.env.SYNCWARD_COMMIT || (typeof built === "string" ? built : undefined) || gitCommit(root);
  cached = { version: typeof version === "string" ? version : "0.0.0", commit: commit ?? "unknown" };
  return cached;
}

export function versionLine(info: BuildInfo = buildInfo()): string {
  return `syncward ${info.version} (commit ${info.commit === "unknown" ? "unknown" : info.commit.slice(0, 12)})`;
}
