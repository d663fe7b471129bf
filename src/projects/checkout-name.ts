// The `owner/name` a local checkout is matched against project globs by (CLI and controller):
// its `origin` remote's path on GitHub (https or ssh form); without one, `local/<directory>`.
import { execFileSync } from "node:child_process";
import { basename } from "node:path";

export function checkoutFullName(repo: string): string {
  return fullNameOfRemote(originUrl(repo)) ?? `local/${basename(repo)}`;
}

/** The checkout's `origin` remote URL; "" without one. */
export function originUrl(repo: string): string {
  try {
    return execFileSync("git", ["remote", "get-url", "origin"], {
      cwd: repo,
      stdio: ["ignore", "pipe", "ignore"],
    })
      .toString()
      .trim();
  } catch {
    return ""; // no origin remote
  }
}

/** `owner/name` of a remote URL (`https://github.com/o/n.git`, `git@github.com:o/n`), else undefined. */
export function fullNameOfRemote(url: string): string | undefined {
  const m = /[/:]([A-Za-z0-9-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : undefined;
}
