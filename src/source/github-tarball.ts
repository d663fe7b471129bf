// The tree of a GitHub repository at an exact SHA, from its tarball (no clone, no git on the host).

import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { SourceError } from "./errors.ts";
import {
  describeBytes,
  maxTarballBytesFromEnv,
  TARBALL_VARIABLE,
  type TreeLimits,
  treeLimitsFromEnv,
} from "./limits.ts";
import { failureText, runWithStream } from "./run.ts";
import { assertFullSha, cachedTree } from "./tree-cache.ts";
import { TreeLimitError, TreeLimiter } from "./tree-limits.ts";

/** Just what this module needs of an Octokit, so the source layer does not depend on the GitHub layer. */
export interface TarballClient {
  rest: {
    repos: {
      downloadTarballArchive(params: {
        owner: string;
        repo: string;
        ref: string;
        request?: { parseSuccessResponseBody?: boolean };
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

/** The response body as chunks: a stream (as asked for), or bytes from a client that buffered. */
function chunksOf(data: unknown): AsyncIterable<Uint8Array> | undefined {
  if (data instanceof ReadableStream) return data as ReadableStream<Uint8Array>;
  const bytes =
    data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : undefined;
  if (!bytes || bytes.byteLength === 0) return undefined;
  return (async function* () {
    yield bytes;
  })();
}

class DownloadTooLarge extends Error {}

/** The chunks of the download, stopped (with DownloadTooLarge) past `max` bytes. */
async function* capped(
  chunks: AsyncIterable<Uint8Array>,
  max: number,
  count: { bytes: number },
): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    count.bytes += chunk.byteLength;
    if (count.bytes > max) throw new DownloadTooLarge();
    yield chunk;
  }
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/**
 * Downloads the tarball of `owner/repo` at `sha` (GitHub answers 302 to a short-lived codeload URL, which
 * Octokit follows), extracts it with the system `tar` without its top-level `<owner>-<repo>-<sha7>/`
 * directory into `<cacheDir>/<sha>` and returns that directory. Cached by SHA; written atomically.
 * The body is streamed into tar, never held whole, and stopped past `maxBytes`.
 */
export async function fetchGitHubTree(
  octokit: TarballClient,
  { owner, repo, sha }: GitHubRevision,
  cacheDir: string,
  maxBytes: number = maxTarballBytesFromEnv(),
  treeLimits: TreeLimits = treeLimitsFromEnv(),
): Promise<string> {
  assertFullSha(sha);
  const where = `${owner}/${repo}`;
  return cachedTree(
    resolve(cacheDir),
    sha,
    async (tmpDir) => {
      let data: unknown;
      try {
        ({ data } = await octokit.rest.repos.downloadTarballArchive({
          owner,
          repo,
          ref: sha,
          request: { parseSuccessResponseBody: false },
        }));
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
      const chunks = chunksOf(data);
      if (!chunks) {
        throw new SourceError(`the tarball of ${where} at ${sha} is empty or not binary data`);
      }
      // Decompressed here, so every header is checked against the tree limits before tar writes it.
      const download = { bytes: 0 };
      const limiter = new TreeLimiter(treeLimits, `the tarball of ${where} at ${sha}`);
      const plain = pipeline(
        Readable.from(capped(chunks, maxBytes, download)),
        createGunzip(),
        limiter,
        () => {},
      );
      const tar = await runWithStream(
        {
          file: "tar",
          args: ["-x", "-f", "-", "--no-same-owner", "-C", tmpDir],
          timeoutMs: TAR_TIMEOUT_MS,
        },
        plain,
        Number.POSITIVE_INFINITY,
      );
      if (tar.inputError instanceof DownloadTooLarge) {
        throw new SourceError(
          `the tarball of ${where} at ${sha} is larger than ${describeBytes(maxBytes)} (${TARBALL_VARIABLE}); download stopped`,
        );
      }
      if (tar.inputError instanceof TreeLimitError) throw new SourceError(tar.inputError.message);
      if (download.bytes === 0) {
        throw new SourceError(`the tarball of ${where} at ${sha} is empty or not binary data`);
      }
      if (tar.inputError)
        throw new SourceError(
          `extracting the tarball of ${where} at ${sha} failed: ${tar.inputError.message}`,
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
    },
    where,
  );
}
