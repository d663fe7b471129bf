// Local git: resolve revisions and materialize the tree at an exact SHA. Real git, argument vectors only.

import { resolve } from "node:path";
import { pipeline } from "node:stream";
import { BoundedMap } from "../util/bounded-map.ts";
import { commitTitle } from "./commit-title.ts";
import { SourceError } from "./errors.ts";
import { branchHeadFromFiles } from "./git-refs.ts";
import { type TreeLimits, treeLimitsFromEnv } from "./limits.ts";
import { failureText, type RunResult, run, runProducer, runWithStream } from "./run.ts";
import { assertFullSha, cachedTree, isFullSha } from "./tree-cache.ts";
import { TreeLimitError, TreeLimiter } from "./tree-limits.ts";

const GIT_TIMEOUT_MS = 120_000;

function git(repoDir: string, args: string[]): Promise<RunResult> {
  return run({ file: "git", args, cwd: repoDir, timeoutMs: GIT_TIMEOUT_MS, isolate: true });
}

function notARepository(result: RunResult): boolean {
  return /not a git repository/i.test(result.stderr);
}

function gitFailure(repoDir: string, what: string, result: RunResult): SourceError {
  if (notARepository(result)) return new SourceError(`${repoDir} is not a git repository (${what})`);
  if (result.spawnError) {
    return new SourceError(
      `cannot run git in ${repoDir} (${result.spawnError.message}): is git installed and does the directory exist?`,
    );
  }
  return new SourceError(`git ${what} failed in ${repoDir}: ${failureText(result)}`);
}

/** Full SHA of the commit `ref` names, or undefined when git knows no such commit. */
async function commitOf(repoDir: string, ref: string): Promise<string | undefined> {
  if (ref === "" || ref.startsWith("-") || ref.includes("\0")) return undefined;
  const result = await git(repoDir, [
    "rev-parse",
    "--verify",
    "--quiet",
    "--end-of-options",
    `${ref}^{commit}`,
  ]);
  if (result.ok) {
    const sha = result.stdout.trim();
    if (!isFullSha(sha)) throw new SourceError(`git rev-parse gave '${sha}' for '${ref}' in ${repoDir}`);
    return sha;
  }
  if (result.spawnError || notARepository(result) || result.stderr.trim() !== "") {
    throw gitFailure(repoDir, "rev-parse", result);
  }
  return undefined;
}

/** The full 40-hex SHA of the commit `ref` (SHA, short SHA, branch, tag, `HEAD~1`...) names. */
export async function resolveRevision(repoDir: string, ref: string): Promise<string> {
  const sha = await commitOf(repoDir, ref);
  if (sha === undefined) throw new SourceError(`revision '${ref}' not found in ${repoDir}`);
  return sha;
}

/** Bytes of a commit message read for its title: a title never needs more. */
const MESSAGE_BYTES = 64 * 1024;

/**
 * The title (first line of the message) of commit `sha`, or undefined when git cannot tell. It
 * only labels history, so any failure leaves it out instead of failing the sync.
 */
export async function commitTitleOf(repoDir: string, sha: string): Promise<string | undefined> {
  if (!isFullSha(sha)) return undefined;
  const result = await run({
    file: "git",
    args: ["log", "-1", "--format=%B", "--end-of-options", sha],
    cwd: repoDir,
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes: MESSAGE_BYTES,
    isolate: true,
  });
  return result.ok ? commitTitle(result.stdout) : undefined;
}

/**
 * SHAs git confirmed to be commits, as `<repoDir>\0<sha>`: a head read from the ref files is
 * returned as is only when git already said it names a commit in that repository.
 */
const knownCommits = new BoundedMap<string, true>(1024);

/**
 * The commit at the tip of `branch`: the local branch, else `origin/<branch>` (a fetched clone).
 * Read from the ref files when they are certain and name a commit git has confirmed (no process);
 * otherwise, and for every error, from `git rev-parse`.
 */
export async function headOf(repoDir: string, branch: string): Promise<string> {
  if (branch === "" || branch.startsWith("-") || branch.startsWith("refs/")) {
    throw new SourceError(`'${branch}' is not a branch name`);
  }
  const fromFiles = await branchHeadFromFiles(repoDir, branch);
  if (fromFiles !== undefined && knownCommits.has(`${repoDir}\0${fromFiles}`)) return fromFiles;
  for (const ref of [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]) {
    const sha = await commitOf(repoDir, ref);
    if (sha !== undefined) {
      knownCommits.set(`${repoDir}\0${sha}`, true);
      return sha;
    }
  }
  throw new SourceError(`branch '${branch}' not found in ${repoDir}`);
}

/**
 * Whether commit `ancestor` is `descendant` or one of its ancestors (`git merge-base
 * --is-ancestor`). False when either is not a full SHA or not a commit git has (an unrelated
 * history, a commit a force push left behind and git collected).
 */
export async function isAncestor(repoDir: string, ancestor: string, descendant: string): Promise<boolean> {
  if (!isFullSha(ancestor) || !isFullSha(descendant)) return false;
  if (ancestor === descendant) return true;
  const result = await git(repoDir, [
    "merge-base",
    "--is-ancestor",
    "--end-of-options",
    ancestor,
    descendant,
  ]);
  if (result.ok) return true;
  if (result.spawnError || notARepository(result)) throw gitFailure(repoDir, "merge-base", result);
  return false;
}

/**
 * Paths (relative to the repository root, sorted) that differ between two revisions. A rename lists both
 * the old and the new path, so an environment whose files moved away notices.
 */
export async function changedFiles(repoDir: string, from: string, to: string): Promise<string[]> {
  const [a, b] = await Promise.all([resolveRevision(repoDir, from), resolveRevision(repoDir, to)]);
  const result = await git(repoDir, [
    "diff",
    "--name-only",
    "-z",
    "--no-renames",
    "--no-ext-diff",
    a,
    b,
    "--",
  ]);
  if (!result.ok) throw gitFailure(repoDir, "diff", result);
  const files = result.stdout.split("\0").filter((f) => f !== "");
  return [...new Set(files)].sort();
}

/**
 * The tree of commit `sha` as a directory `<cacheDir>/<sha>` (`git archive | tar -x`, symlinks kept as in
 * git). Written to a temporary directory and renamed, so callers never see half a tree; a second call with
 * the same SHA returns the same directory without touching git.
 */
export async function checkoutTree(
  repoDir: string,
  sha: string,
  cacheDir: string,
  treeLimits: TreeLimits = treeLimitsFromEnv(),
): Promise<string> {
  assertFullSha(sha);
  return cachedTree(
    resolve(cacheDir),
    sha,
    async (tmpDir) => {
      const found = await commitOf(repoDir, sha);
      if (found !== sha) throw new SourceError(`revision '${sha}' not found in ${repoDir}`);
      const producer = await runProducer({
        file: "git",
        args: ["archive", "--format=tar", sha],
        cwd: repoDir,
        timeoutMs: GIT_TIMEOUT_MS,
        isolate: true,
      });
      // Every header is checked against the tree limits before tar writes the entry.
      const limiter = new TreeLimiter(treeLimits, `${repoDir} at ${sha}`);
      const plain = pipeline(producer.stdout, limiter, () => {});
      const tar = await runWithStream(
        { file: "tar", args: ["-x", "-f", "-", "--no-same-owner", "-C", tmpDir], timeoutMs: GIT_TIMEOUT_MS },
        plain,
        Number.POSITIVE_INFINITY,
      );
      const archive = await producer.result;
      if (tar.inputError instanceof TreeLimitError) throw new SourceError(tar.inputError.message);
      if (!archive.ok) throw gitFailure(repoDir, `archive ${sha}`, archive);
      if (!tar.ok) throw new SourceError(`extracting ${sha} from ${repoDir} failed: ${failureText(tar)}`);
      return tmpDir;
    },
    repoDir,
  );
}
