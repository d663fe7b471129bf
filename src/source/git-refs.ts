// A branch head read from the repository's files (the loose ref, then packed-refs) instead of a
// `git rev-parse` process: an idle controller asks every environment's branch head at every poll,
// and a process spawn each time was most of its idle CPU (docs/benchmarks-log.md, "Scale on one replica").
// Only the layout git itself writes for a plain repository is read here; anything this reader is
// not certain of (a `.git` file of a worktree or submodule, a reftable or shared-common-dir
// repository, a symbolic ref, a name git would quote or refuse, GIT_DIR and friends in the
// environment, an unexpected file) answers "unsure", and the caller asks git.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { isFullSha } from "./tree-cache.ts";

/** What the files say about one ref: its SHA, that it does not exist, or undefined when not certain. */
export type RefFileRead = { sha: string } | { missing: true } | undefined;

/** Variables that make git read another repository or another ref namespace than `<dir>/.git`. */
const REDIRECTING_ENV = ["GIT_DIR", "GIT_COMMON_DIR", "GIT_NAMESPACE"];

/**
 * Whether `name` is a branch name whose ref file path is exactly `refs/heads/<name>`: a conservative
 * subset of `git check-ref-format --branch` (a name outside it is still a branch to git; it is
 * only read the slow way).
 */
export function plainBranchName(name: string): boolean {
  if (name === "" || name.length > 200 || name.startsWith("-") || name === "HEAD") return false;
  // Control characters, space, DEL and the characters git forbids in ref names.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: those are exactly what is refused
  if (/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$/.test(name)) return false;
  return name.split("/").every((part) => part !== "@" && !part.startsWith(".") && !part.endsWith(".lock"));
}

/** What a loose ref file's text says: a SHA, or undefined for anything else (a symbolic ref, junk). */
export function looseRefSha(text: string): string | undefined {
  const sha = text.endsWith("\n") ? text.slice(0, -1) : text;
  return isFullSha(sha) ? sha : undefined;
}

/** Where `ref` (a full ref name) points in the text of a packed-refs file. */
export function packedRefSha(text: string, ref: string): RefFileRead {
  // Ref names hold no space or newline, so " <ref>" at the end of a line is that ref's entry.
  const entry = ` ${ref}`;
  let at = text.indexOf(`${entry}\n`);
  if (at < 0 && text.endsWith(entry)) at = text.length - entry.length;
  if (at < 0) return { missing: true };
  const sha = text.slice(text.lastIndexOf("\n", at) + 1, at);
  return isFullSha(sha) ? { sha } : undefined;
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function readOrMissing(path: string): Promise<string | { missing: true } | undefined> {
  try {
    return await readFile(path, "latin1");
  } catch (err) {
    return code(err) === "ENOENT" ? { missing: true } : undefined;
  }
}

/** The ref as git resolves it from a files-backend git directory: the loose file, else packed-refs. */
async function readRef(gitDir: string, ref: string): Promise<RefFileRead> {
  const loose = await readOrMissing(join(gitDir, ref));
  if (typeof loose === "string") {
    const sha = looseRefSha(loose);
    return sha ? { sha } : undefined;
  }
  if (!loose) return undefined;
  // Git writes packed-refs before it deletes the loose files it packed, so reading in this order
  // never misses a ref that exists in one of them.
  const packed = await readOrMissing(join(gitDir, "packed-refs"));
  if (typeof packed === "string") return packedRefSha(packed, ref);
  return packed;
}

/** True when `path` does not exist; false when it does or cannot be told. */
async function absent(path: string): Promise<boolean> {
  try {
    await stat(path);
    return false;
  } catch (err) {
    return code(err) === "ENOENT";
  }
}

/**
 * The SHA `refs/heads/<branch>` (else `refs/remotes/origin/<branch>`) holds in the repository whose
 * work tree is `repoDir`, read from its files; undefined whenever git should be asked instead
 * (including when neither ref exists: git's answer carries the error). Never cached: every call
 * reads the files, so a commit or a push is seen by the next call.
 */
export async function branchHeadFromFiles(
  repoDir: string,
  branch: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  if (!plainBranchName(branch) || REDIRECTING_ENV.some((name) => env[name] !== undefined)) return undefined;
  const gitDir = join(repoDir, ".git");
  // A `.git` file (worktree, submodule) makes every path below it fail with ENOTDIR: unsure.
  const [plain, local] = await Promise.all([
    Promise.all([absent(join(gitDir, "reftable")), absent(join(gitDir, "commondir"))]).then((a) =>
      a.every(Boolean),
    ),
    readRef(gitDir, `refs/heads/${branch}`),
  ]);
  if (!plain || !local) return undefined;
  if ("sha" in local) return local.sha;
  const remote = await readRef(gitDir, `refs/remotes/origin/${branch}`);
  return remote && "sha" in remote ? remote.sha : undefined;
}
