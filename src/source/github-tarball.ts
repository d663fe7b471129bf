// The tree of a GitHub repository at an exact SHA, from its tarball (no clone, no git on the host).

import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SourceError } from "./errors.ts";
import { failureText, runWithInput } from "./run.ts";
import { assertFullSha, cachedTree } from "./tree-cache.ts";

/** Just what this module needs of an Octokit, so the source layer does not depend on the GitHub layer. */
export interface TarballClient {
  rest: {
    repos: {
      downloadTarballArchive(params: {
        owner: string;
        repo: string;
        ref: string;
      }): Promise<{ data: unknown }>;
    };
  };
}

export interface GitHubRevision {
  owner: string;
  repo: string;
  sha: string;
}

const TAR_TIMEOUT_MS = 120_000;

function bytesOf(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/**
 * Downloads the tarball of `owner/repo` at `sha` (GitHub answers 302 to a short-lived codeload URL, which
 * Octokit follows), extracts it with the system `tar` without its top-level `<owner>-<repo>-<sha7>/`
 * directory into `<cacheDir>/<sha>` and returns that directory. Cached by SHA; written atomically.
 */
export async function fetchGitHubTree(
  octokit: TarballClient,
  { owner, repo, sha }: GitHubRevision,
  cacheDir: string,
): Promise<string> {
  assertFullSha(sha);
  const where = `${owner}/${repo}`;
  return cachedTree(resolve(cacheDir), sha, async (tmpDir) => {
    let data: unknown;
    try {
      ({ data } = await octokit.rest.repos.downloadTarballArchive({ owner, repo, ref: sha }));
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) {
        throw new SourceError(`revision '${sha}' not found in ${where} (or the app cannot read it)`, {
          cause: err,
        });
      }
      const why = err instanceof Error ? err.message : String(err);
      throw new SourceError(`downloading the tarball of ${where} at ${sha} failed: ${why}`, { cause: err });
    }
    const bytes = bytesOf(data);
    if (!bytes || bytes.byteLength === 0) {
      throw new SourceError(`the tarball of ${where} at ${sha} is empty or not binary data`);
    }
    const tar = await runWithInput(
      {
        file: "tar",
        args: ["-x", "-z", "-f", "-", "--no-same-owner", "-C", tmpDir],
        timeoutMs: TAR_TIMEOUT_MS,
      },
      bytes,
    );
    if (!tar.ok) {
      throw new SourceError(`extracting the tarball of ${where} at ${sha} failed: ${failureText(tar)}`);
    }
    // GitHub puts everything under one directory, `<owner>-<repo>-<sha7>/`: that directory is the tree.
    const entries = await readdir(tmpDir, { withFileTypes: true });
    const top = entries[0];
    if (entries.length !== 1 || !top?.isDirectory()) {
      const names = entries.map((e) => e.name).join(", ") || "nothing";
      throw new SourceError(
        `the tarball of ${where} at ${sha} should hold one top-level directory, found: ${names}`,
      );
    }
    return join(tmpDir, top.name);
  });
}
