// Throwaway git repositories made with real git, for tests that need revisions.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface TestRepo {
  dir: string;
  /** Writes files (null deletes), commits, returns the full SHA. */
  commit(files: Record<string, string | null>, message?: string): string;
  head(): string;
  git(...args: string[]): string;
}

export function makeRepo(files: Record<string, string | null> = {}, branch = "main"): TestRepo {
  const dir = mkdtempSync(join(tmpdir(), "syncward-repo-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd: dir })
      .toString()
      .trim();
  git("init", "-q", "-b", branch);
  const repo: TestRepo = {
    dir,
    git,
    commit(changes, message = "change") {
      for (const [path, content] of Object.entries(changes)) {
        const abs = join(dir, path);
        if (content === null) rmSync(abs, { force: true });
        else {
          mkdirSync(dirname(abs), { recursive: true });
          writeFileSync(abs, content);
        }
      }
      git("add", "-A");
      git("commit", "-q", "--allow-empty", "-m", message);
      return git("rev-parse", "HEAD");
    },
    head: () => git("rev-parse", "HEAD"),
  };
  if (Object.keys(files).length > 0) repo.commit(files, "initial");
  return repo;
}
