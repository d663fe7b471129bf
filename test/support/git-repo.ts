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

/** `at`: an empty directory to make it in (default: a fresh temporary one). */
export function makeRepo(files: Record<string, string | null> = {}, branch = "main", at?: string): TestRepo {
  const dir = at ?? mkdtempSync(join(tmpdir(), "syncward-repo-"));
  if (at) mkdirSync(at, { recursive: true });
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

/**
 * GitHub's test merge of a pull request: `head` merged into `base` as a commit that no branch
 * points at (GitHub keeps it at refs/pull/N/merge). Throws when the two conflict.
 */
export function testMerge(repo: TestRepo, base: string, head: string): string {
  const tree = repo.git("merge-tree", "--write-tree", base, head).trim().split("\n")[0] as string;
  return repo.git("commit-tree", tree, "-p", base, "-p", head, "-m", "test merge").trim();
}
