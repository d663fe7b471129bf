// Keeping a render inside its repository: the requested path, and every symlink it may follow.

import type { Dirent } from "node:fs";
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { SourceError, type SourceProblem } from "./errors.ts";

/** True when `path` is `root` or below it (both absolute and normalized). */
export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Repository-relative form of an absolute path inside the tree, with `/` separators. */
export function relativeToTree(treeReal: string, abs: string): string {
  const rel = relative(treeReal, abs).split(sep).join("/");
  return rel === "" ? "." : rel;
}

export interface SourcePath {
  /** Real path of the tree root. */
  treeReal: string;
  /** Real absolute path of the requested path. */
  abs: string;
  /** The requested path, normalized, relative to the tree root (`.` for the root). */
  rel: string;
  isDirectory: boolean;
}

/**
 * Resolves `path` (relative to the tree root) inside `treeDir`. Refuses absolute paths, paths that climb out
 * with `..`, and paths that leave the tree through a symlink; a path that does not exist is an error too.
 */
export async function resolveSourcePath(treeDir: string, path: string): Promise<SourcePath> {
  let treeReal: string;
  try {
    treeReal = await realpath(treeDir);
  } catch {
    throw new SourceError(`the source tree ${treeDir} does not exist`);
  }
  const raw = path.replaceAll("\\", "/");
  if (raw.includes("\0")) throw new SourceError(`path '${path}' is not a valid path`);
  if (posix.isAbsolute(raw) || isAbsolute(path) || /^[a-zA-Z]:/.test(raw)) {
    throw new SourceError(`path '${path}' is absolute: paths are relative to the repository root; refused`);
  }
  const rel = posix.normalize(raw === "" ? "." : raw).replace(/\/+$/, "") || ".";
  if (rel === ".." || rel.startsWith("../")) {
    throw new SourceError(`path '${path}' points outside the repository; refused`);
  }
  const lexical = resolve(treeReal, rel);
  let abs: string;
  try {
    abs = await realpath(lexical);
  } catch {
    throw new SourceError(`path '${rel}' does not exist in the repository`);
  }
  if (!isInside(treeReal, abs)) {
    throw new SourceError(`path '${rel}' leads outside the repository through a symlink; refused`);
  }
  const isDirectory = (await stat(abs)).isDirectory();
  return { treeReal, abs, rel, isDirectory };
}

/** Where a symlink at `linkAbs` leads, or why it is refused; `undefined` target = dangling inside the tree. */
export async function followSymlink(
  treeReal: string,
  linkAbs: string,
): Promise<{ target?: string; problem?: string }> {
  const shown = await readlink(linkAbs).catch(() => "?");
  let target: string;
  try {
    target = await realpath(linkAbs);
  } catch {
    // Dangling: refuse it if its text already points out of the tree, else it is merely broken.
    const lexical = resolve(dirname(linkAbs), shown);
    if (!isInside(treeReal, lexical)) {
      return { problem: `symlink points outside the repository (-> ${shown}); refused` };
    }
    return {};
  }
  if (!isInside(treeReal, target)) {
    return { problem: `symlink points outside the repository (-> ${shown}); refused` };
  }
  return { target };
}

export interface WalkedFile {
  /** Repository-relative path as found (through in-tree symlinks). */
  rel: string;
  /** Absolute path to read. */
  abs: string;
}

export interface WalkOptions {
  /** Skip directories whose name starts with a dot. */
  skipDotDirectories: boolean;
  /** Which files to return. */
  wants: (name: string) => boolean;
  /** Report a symlink to a wanted file that leads nowhere. */
  reportBroken: boolean;
}

/**
 * Walks `startAbs` (a real directory inside the tree) recursively, following in-tree symlinks (once per real
 * directory, so a loop ends), and returns the wanted files sorted by path. Every symlink that leads outside
 * the tree is a problem, whatever it names: nothing outside the repository may be read.
 */
export async function walkTree(
  treeReal: string,
  startAbs: string,
  startRel: string,
  options: WalkOptions,
  visited: Set<string> = new Set(),
): Promise<{ files: WalkedFile[]; problems: SourceProblem[] }> {
  const files: WalkedFile[] = [];
  const problems: SourceProblem[] = [];
  const join2 = (a: string, b: string) => (a === "." ? b : `${a}/${b}`);

  async function walk(dirAbs: string, dirRel: string): Promise<void> {
    const real = await realpath(dirAbs);
    if (visited.has(real)) return;
    visited.add(real);
    let entries: Dirent[];
    try {
      entries = await readdir(dirAbs, { withFileTypes: true });
    } catch (err) {
      problems.push({ file: dirRel, message: `cannot read directory: ${(err as Error).message}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const abs = join(dirAbs, entry.name);
      const rel = join2(dirRel, entry.name);
      const dotDir = options.skipDotDirectories && entry.name.startsWith(".");
      if (entry.isSymbolicLink()) {
        const { target, problem } = await followSymlink(treeReal, abs);
        if (problem) {
          problems.push({ file: rel, message: problem });
          continue;
        }
        if (target === undefined) {
          if (options.reportBroken && options.wants(entry.name)) {
            problems.push({ file: rel, message: `broken symlink (-> ${await readlink(abs)})` });
          }
          continue;
        }
        const info = await lstat(target);
        if (info.isDirectory()) {
          if (!dotDir) await walk(target, rel);
        } else if (info.isFile() && options.wants(entry.name)) {
          files.push({ rel, abs: target });
        }
      } else if (entry.isDirectory()) {
        if (!dotDir) await walk(abs, rel);
      } else if (entry.isFile() && options.wants(entry.name)) {
        files.push({ rel, abs });
      }
    }
  }

  await walk(startAbs, startRel);
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, problems };
}
