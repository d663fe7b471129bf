// helm for tests: the one tools/cluster/build.sh builds from the Go module proxy (cached after the first
// build; the build's lock makes parallel test files wait for one build instead of racing).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const built = new Map<string, string>();

/** Builds (or finds cached) one component of tools/cluster/build.sh and returns its path. */
function component(name: string): string {
  let path = built.get(name);
  if (!path) {
    const out = execFileSync("bash", ["tools/cluster/build.sh", name], {
      stdio: ["ignore", "pipe", "inherit"],
    }).toString();
    const line = out.split("\n").find((l) => l.startsWith(`${name}=`));
    if (!line) throw new Error(`tools/cluster/build.sh printed no ${name} path`);
    path = line.slice(name.length + 1);
    built.set(name, path);
  }
  return path;
}

/** The path of the built helm (SYNCWARD_HELM when set). */
export function ensureHelm(): string {
  return process.env.SYNCWARD_HELM ?? component("helm");
}

/** The OCI registry (CNCF distribution) built for the OCI dependency test. */
export function ensureRegistry(): string {
  return component("registry");
}

/** Every file of a fixture folder, keyed by `prefix/<path inside it>`, for makeRepo. */
export function fixtureFiles(dir: string, prefix: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const path = join(abs, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[`${prefix}/${relative(dir, path)}`] = readFileSync(path, "utf8");
    }
  };
  walk(dir);
  return files;
}
