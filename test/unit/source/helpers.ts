// Throwaway git repositories built with the real git, for the source layer's tests.

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "source");

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_GLOBAL: "/dev/null",
  LC_ALL: "C",
};

/** A file's content, a symlink to create, or null to delete the path. */
export type FileSpec = string | { symlink: string } | null;

/** A fresh temporary directory; removed by `cleanup`. */
export function tempDir(prefix = "syncward-source-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cleanup(...dirs: string[]): void {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

/** Writes files (and symlinks) below `root`; null deletes. */
export function writeTree(root: string, files: Record<string, FileSpec>): void {
  for (const [path, spec] of Object.entries(files)) {
    const abs = join(root, path);
    if (spec === null) {
      rmSync(abs, { recursive: true, force: true });
      continue;
    }
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof spec === "string") writeFileSync(abs, spec);
    else symlinkSync(spec.symlink, abs);
  }
}

export class TestRepo {
  readonly dir: string;

  constructor(dir = tempDir("syncward-repo-")) {
    this.dir = dir;
    this.git("init", "--quiet", "--initial-branch=main");
  }

  git(...args: string[]): string {
    return execFileSync("git", ["-c", "commit.gpgsign=false", ...args], {
      cwd: this.dir,
      env: GIT_ENV,
      encoding: "utf8",
    }).trim();
  }

  /** Writes the files, commits everything, returns the new commit's SHA. */
  commit(message: string, files: Record<string, FileSpec>): string {
    writeTree(this.dir, files);
    this.git("add", "--all");
    this.git("commit", "--quiet", "--allow-empty", "-m", message);
    return this.git("rev-parse", "HEAD");
  }

  /** Copies a fixture directory into the work tree and commits it. */
  commitFixture(message: string, fixture: string, into = "."): string {
    cpSync(join(FIXTURES, fixture), join(this.dir, into), { recursive: true });
    this.git("add", "--all");
    this.git("commit", "--quiet", "-m", message);
    return this.git("rev-parse", "HEAD");
  }

  /** `git archive` of a commit as bytes (for tarball tests). */
  archive(sha: string, ...args: string[]): Buffer {
    return execFileSync("git", ["archive", ...args, sha], {
      cwd: this.dir,
      env: GIT_ENV,
      maxBuffer: 1 << 28,
    });
  }
}
