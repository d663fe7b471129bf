// Oversized trees are refused on the tar stream, before their bytes reach the disk: a gzip bomb of
// 10 GB of zeros, 100,000 small files, a path deeper than the limit; by the GitHub tarball and by
// local git alike. Big inputs are generated lazily here, never committed.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { Readable } from "node:stream";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { createGzip } from "node:zlib";
import { Octokit } from "@octokit/rest";
import nock from "nock";
import { SourceError } from "../../../src/source/errors.ts";
import { checkoutTree } from "../../../src/source/git.ts";
import { fetchGitHubTree } from "../../../src/source/github-tarball.ts";
import { DEFAULT_TREE_LIMITS } from "../../../src/source/limits.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

const API = "https://api.github.com";
const CODELOAD = "https://codeload.github.com";
const TOP = "owner-repo-abc1234";

/** A ustar header; sizes of 8 GiB and more in GNU base-256, as GNU tar writes them. */
function header(path: string, size: number, type = "0"): Buffer {
  const h = Buffer.alloc(512);
  // Names over 100 bytes go in the ustar prefix field (split at a slash).
  const cut = path.length > 100 ? path.lastIndexOf("/", 154) : -1;
  const name = cut < 0 ? path : path.slice(cut + 1);
  if (cut >= 0) h.write(path.slice(0, cut), 345, 155);
  h.write(name, 0, 100);
  h.write("0000644\0", 100);
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  if (size < 8 ** 11) h.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  else {
    h[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--) {
      h[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  h.write("00000000000\0", 136);
  h.write("        ", 148);
  h.write(type, 156);
  h.write("ustar\0", 257);
  h.write("00", 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return h;
}

const MiB = 1024 * 1024;

/** A gzipped tar produced on demand; `produced.bytes` says how much of it anyone asked for. */
function lazyTarball(entries: () => Generator<Buffer>, produced: { bytes: number }): Readable {
  const source = Readable.from(
    (function* () {
      for (const chunk of entries()) {
        produced.bytes += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false, highWaterMark: MiB },
  );
  return source.pipe(createGzip({ level: 1 }));
}

function* zeros(total: number): Generator<Buffer> {
  const block = Buffer.alloc(MiB);
  for (let left = total; left > 0; left -= MiB) yield left >= MiB ? block : block.subarray(0, left);
}

describe("tree limits", () => {
  const quiet = () => {};
  const octokit = new Octokit({ log: { debug: quiet, info: quiet, warn: quiet, error: quiet } });
  const sha = "a".repeat(40);
  let cache: string;

  before(() => nock.disableNetConnect());
  after(() => nock.enableNetConnect());
  beforeEach(() => {
    cache = tempDir("syncward-cache-");
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    cleanup(cache);
    assert.deepEqual(pending, [], "every mocked request was made");
  });

  function serve(body: () => Readable) {
    const download = `/owner/repo/legacy.tar.gz/${sha}`;
    nock(API)
      .get(`/repos/owner/repo/tarball/${sha}`)
      .reply(302, "", { location: `${CODELOAD}${download}` });
    nock(CODELOAD).get(download).reply(200, body, { "content-type": "application/x-gzip" });
  }

  async function refusal(limits = DEFAULT_TREE_LIMITS): Promise<string> {
    try {
      await fetchGitHubTree(octokit, { owner: "owner", repo: "repo", sha }, cache, undefined, limits);
    } catch (err) {
      assert.ok(err instanceof SourceError, String(err));
      assert.deepEqual(readdirSync(cache), [], "nothing is left in the cache");
      return err.message;
    }
    assert.fail("the tree was accepted");
  }

  it("refuses a gzip bomb of 10 GB of zeros at its header, without extracting it", async () => {
    const produced = { bytes: 0 };
    const tenGB = 10 * 1024 ** 3;
    serve(() =>
      lazyTarball(function* () {
        yield header(`${TOP}/`, 0, "5");
        yield header(`${TOP}/zeros.bin`, tenGB);
        yield* zeros(tenGB);
      }, produced),
    );
    assert.equal(
      await refusal(),
      `the tarball of owner/repo at ${sha} holds '${TOP}/zeros.bin' of 10.0 GiB (10737418240 bytes) (the limit for one file is 100.0 MiB (104857600 bytes)); refused before extracting it (raise SYNCWARD_MAX_TREE_FILE_BYTES if the repository really needs it)`,
    );
    assert.ok(produced.bytes < 256 * MiB, `${produced.bytes} bytes were produced`);
  });

  it("refuses a bomb of many files at the total, having written no more than the limit", async () => {
    const produced = { bytes: 0 };
    serve(() =>
      lazyTarball(function* () {
        yield header(`${TOP}/`, 0, "5");
        for (let i = 0; i < 400; i++) {
          yield header(`${TOP}/zeros-${i}.bin`, MiB);
          yield* zeros(MiB);
        }
      }, produced),
    );
    const message = await refusal({ ...DEFAULT_TREE_LIMITS, maxTreeBytes: 16 * MiB });
    assert.match(message, /holds more than 16\.0 MiB .* of files; refused .*SYNCWARD_MAX_TREE_BYTES/);
  });

  it("refuses 100,000 small files", async () => {
    serve(() =>
      lazyTarball(
        function* () {
          yield header(`${TOP}/`, 0, "5");
          const body = Buffer.alloc(512);
          for (let batch = 0; batch < 100; batch++) {
            const entries: Buffer[] = [];
            for (let i = batch * 1000; i < (batch + 1) * 1000; i++)
              entries.push(header(`${TOP}/f/${i}.yaml`, 1), body);
            yield Buffer.concat(entries);
          }
        },
        { bytes: 0 },
      ),
    );
    // The default (50,000) refuses them too; a lower limit keeps the extraction before it short.
    assert.ok(DEFAULT_TREE_LIMITS.maxTreeFiles < 100_000);
    assert.match(
      await refusal({ ...DEFAULT_TREE_LIMITS, maxTreeFiles: 5000 }),
      /holds more than 5000 files; refused .*SYNCWARD_MAX_TREE_FILES/,
    );
  });

  it("refuses a path deeper than the limit", async () => {
    const deep = `${TOP}/${Array.from({ length: 40 }, (_, i) => `d${i}`).join("/")}/x.yaml`;
    serve(() =>
      lazyTarball(
        function* () {
          yield header(`${TOP}/`, 0, "5");
          yield header(deep, 0);
          yield Buffer.alloc(1024);
        },
        { bytes: 0 },
      ),
    );
    assert.match(await refusal(), /folders deep \(the limit is 32\); refused .*SYNCWARD_MAX_TREE_DEPTH/);
  });

  it("checks a local git tree the same way, and an honest tree still extracts", async () => {
    const repo = new TestRepo();
    try {
      const many = repo.commit(
        "many",
        Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`m/${i}.yaml`, "a: b\n"])),
      );
      await assert.rejects(
        checkoutTree(repo.dir, many, cache, { ...DEFAULT_TREE_LIMITS, maxTreeFiles: 10 }),
        (err: unknown) =>
          err instanceof SourceError &&
          /holds more than 10 files; refused .*SYNCWARD_MAX_TREE_FILES/.test(err.message),
      );
      assert.deepEqual(readdirSync(cache), []);
      const big = repo.commit("big", { "big.yaml": `a: ${"x".repeat(4096)}\n` });
      await assert.rejects(
        checkoutTree(repo.dir, big, cache, { ...DEFAULT_TREE_LIMITS, maxTreeFileBytes: 1024 }),
        (err: unknown) => err instanceof SourceError && /SYNCWARD_MAX_TREE_FILE_BYTES/.test(err.message),
      );
      const dir = await checkoutTree(repo.dir, big, cache);
      assert.ok(readdirSync(dir).includes("big.yaml"));
    } finally {
      cleanup(repo.dir);
    }
  });
});
