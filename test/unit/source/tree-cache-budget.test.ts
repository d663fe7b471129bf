// The tree cache stays within its budget, and one repository within its share: a repository that
// floods the cache with trees evicts its own, never every other repository's.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { cachedTree } from "../../../src/source/tree-cache.ts";
import { IN_USE_MS, planEviction } from "../../../src/source/tree-cache-budget.ts";
import { cleanup, tempDir, writeTree } from "./helpers.ts";

const limits = { treeCacheBytes: 100, treeCacheRepoBytes: 40, helmCacheBytes: 0 };
const old = (sha: string, owner: string, bytes: number, usedAt: number) => ({ sha, owner, bytes, usedAt });

describe("planEviction", () => {
  const now = 10 * IN_USE_MS;
  it("evicts the repository's own oldest trees past its share", () => {
    const entries = [
      old("a1", "a", 20, 1),
      old("b1", "b", 20, 2),
      old("a2", "a", 20, 3),
      old("a3", "a", 20, now),
    ];
    assert.deepEqual(
      planEviction(entries, { sha: "a3", owner: "a" }, limits, now).map((e) => e.sha),
      ["a1"],
    );
  });
  it("over the whole budget, takes the biggest holder's least recently used tree, never one in use", () => {
    const entries = [
      old("b1", "b", 40, 1),
      old("c1", "c", 30, 2),
      old("c2", "c", 10, now - 1),
      old("d1", "d", 30, now),
    ];
    assert.deepEqual(
      planEviction(entries, { sha: "d1", owner: "d" }, limits, now).map((e) => e.sha),
      ["b1"],
    );
  });
});

describe("cachedTree with a budget", () => {
  it("keeps an honest repository's tree while another floods the cache", async () => {
    const cache = tempDir("syncward-cache-");
    const small = { treeCacheBytes: 4096, treeCacheRepoBytes: 2048, helmCacheBytes: 0 };
    const fill = (bytes: number) => async (tmp: string) => {
      writeTree(tmp, { "f.yaml": "x".repeat(bytes) });
      return tmp;
    };
    try {
      const honest = await cachedTree(cache, "1".repeat(40), fill(1000), "org/honest", small);
      for (let i = 0; i < 10; i++)
        await cachedTree(cache, `${i}`.padStart(40, "e"), fill(1000), "org/flood", small);
      assert.ok(existsSync(join(honest, "f.yaml")), "the honest tree is still there");
      const flood = Array.from({ length: 10 }, (_, i) => existsSync(join(cache, `${i}`.padStart(40, "e"))));
      assert.deepEqual(flood, [false, false, false, false, false, false, false, false, true, true]);
    } finally {
      cleanup(cache);
    }
  });
});

describe("cachedTree and trees cached without a record", () => {
  it("measures a tree an earlier version cached, so that it counts and can be evicted", async () => {
    const cache = tempDir("syncward-cache-");
    const small = { treeCacheBytes: 4096, treeCacheRepoBytes: 2048, helmCacheBytes: 0 };
    const fill = (tmp: string) => {
      writeTree(tmp, { "f.yaml": "x".repeat(1000) });
      return Promise.resolve(tmp);
    };
    try {
      const legacy = "a".repeat(40);
      writeTree(join(cache, legacy), { "f.yaml": "x".repeat(1000) }); // no .meta record
      const again = await cachedTree(cache, legacy, fill, "org/flood", small);
      assert.ok(existsSync(join(cache, ".meta", `${legacy}.json`)), "the cached tree is recorded on use");
      for (let i = 0; i < 3; i++) await cachedTree(cache, `${i}`.padStart(40, "e"), fill, "org/flood", small);
      assert.equal(
        existsSync(again),
        false,
        "the measured tree is evicted first, past the repository's share",
      );
    } finally {
      cleanup(cache);
    }
  });
});

describe("chartCacheKey", () => {
  it("gives every exact (repository, chart, version) its own entry, with a safe name", async () => {
    const { chartCacheKey } = await import("../../../src/source/helm-repositories.ts");
    const repo = "https://charts.example.com";
    assert.notEqual(chartCacheKey(repo, "web", "^1.0"), chartCacheKey(repo, "web", "~1.0"));
    assert.notEqual(chartCacheKey(repo, "web", "1.0.0"), chartCacheKey(`${repo}/other`, "web", "1.0.0"));
    assert.equal(chartCacheKey(repo, "web", "1.0.0"), chartCacheKey(`${repo}/`, "web", "1.0.0"));
    assert.match(chartCacheKey(repo, "../../etc", "1.0.0"), /^[A-Za-z0-9.+_-]+$/);
  });
});
