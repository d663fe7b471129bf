import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { changedFiles, checkoutTree, headOf, resolveRevision } from "../../../src/source/git.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

const CM = (name: string, value = "1") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;

describe("local git", () => {
  let repo: TestRepo;
  let cache: string;
  let first: string;
  let second: string;
  let feature: string;

  before(() => {
    repo = new TestRepo();
    cache = tempDir("syncward-cache-");
    first = repo.commit("first", {
      "apps/web/cm.yaml": CM("web"),
      "apps/web/link.yaml": { symlink: "cm.yaml" },
      "apps/api/cm.yaml": CM("api"),
      "docs/old-name.md": "docs\n",
      "README.md": "hello\n",
    });
    repo.git("tag", "v1");
    second = repo.commit("second", {
      "apps/web/cm.yaml": CM("web", "2"),
      "apps/api/cm.yaml": null,
      "apps/db/cm.yaml": CM("db"),
      "docs/old-name.md": null,
      "docs/new-name.md": "docs\n",
    });
    repo.git("checkout", "--quiet", "-b", "feature");
    feature = repo.commit("feature", { "apps/web/extra.yaml": CM("extra") });
    repo.git("checkout", "--quiet", "main");
  });

  after(() => cleanup(repo.dir, cache));

  describe("resolveRevision", () => {
    const cases: Array<{ ref: string; expect: () => string }> = [
      { ref: "main", expect: () => second },
      { ref: "HEAD", expect: () => second },
      { ref: "HEAD~1", expect: () => first },
      { ref: "v1", expect: () => first },
      { ref: "feature", expect: () => feature },
      { ref: "refs/heads/feature", expect: () => feature },
    ];
    for (const { ref, expect } of cases) {
      it(`resolves ${ref} to the full SHA`, async () => {
        const sha = await resolveRevision(repo.dir, ref);
        assert.match(sha, /^[0-9a-f]{40}$/);
        assert.equal(sha, expect());
      });
    }

    it("resolves a short SHA and a full SHA to themselves", async () => {
      assert.equal(await resolveRevision(repo.dir, first.slice(0, 10)), first);
      assert.equal(await resolveRevision(repo.dir, first), first);
    });

    for (const ref of [
      "nope",
      "0000000000000000000000000000000000000000",
      "--all",
      "-h",
      "main:README.md",
      "",
    ]) {
      it(`refuses '${ref}' as not found`, async () => {
        await assert.rejects(resolveRevision(repo.dir, ref), (err: unknown) => {
          assert.ok(err instanceof SourceError);
          assert.equal(err.message, `revision '${ref}' not found in ${repo.dir}`);
          return true;
        });
      });
    }

    it("says when the directory is not a git repository", async () => {
      const dir = tempDir();
      try {
        await assert.rejects(resolveRevision(dir, "main"), /is not a git repository/);
      } finally {
        cleanup(dir);
      }
    });
  });

  describe("headOf", () => {
    it("returns the tip of a branch", async () => {
      assert.equal(await headOf(repo.dir, "main"), second);
      assert.equal(await headOf(repo.dir, "feature"), feature);
    });

    it("does not take a tag or a SHA for a branch", async () => {
      await assert.rejects(headOf(repo.dir, "v1"), /branch 'v1' not found/);
      await assert.rejects(headOf(repo.dir, first), /not found/);
      await assert.rejects(headOf(repo.dir, "--all"), /not a branch name/);
    });

    it("falls back to origin/<branch> in a clone", async () => {
      const clone = tempDir("syncward-clone-");
      try {
        const c = new TestRepo(clone);
        c.git("remote", "add", "origin", repo.dir);
        c.git("fetch", "--quiet", "origin");
        assert.equal(await headOf(clone, "feature"), feature);
      } finally {
        cleanup(clone);
      }
    });
  });

  describe("changedFiles", () => {
    it("lists modified, added, deleted and both sides of renamed paths, sorted", async () => {
      assert.deepEqual(await changedFiles(repo.dir, first, second), [
        "apps/api/cm.yaml",
        "apps/db/cm.yaml",
        "apps/web/cm.yaml",
        "docs/new-name.md",
        "docs/old-name.md",
      ]);
    });

    it("accepts refs and returns nothing for equal revisions", async () => {
      assert.deepEqual(await changedFiles(repo.dir, "main", "feature"), ["apps/web/extra.yaml"]);
      assert.deepEqual(await changedFiles(repo.dir, "v1", first), []);
    });

    it("names a missing revision", async () => {
      await assert.rejects(changedFiles(repo.dir, "v1", "gone"), /revision 'gone' not found/);
    });
  });

  describe("checkoutTree", () => {
    it("materializes the tree at a SHA into <cache>/<sha>, symlinks kept", async () => {
      const dir = await checkoutTree(repo.dir, first, cache);
      assert.equal(dir, join(cache, first));
      assert.equal(readFileSync(join(dir, "apps/web/cm.yaml"), "utf8"), CM("web"));
      assert.ok(existsSync(join(dir, "apps/api/cm.yaml")));
      assert.ok(lstatSync(join(dir, "apps/web/link.yaml")).isSymbolicLink());
      assert.equal(readlinkSync(join(dir, "apps/web/link.yaml")), "cm.yaml");
      assert.ok(!existsSync(join(dir, ".git")));
      // No temporary directory is left behind.
      assert.deepEqual(
        readdirSync(cache).filter((n) => n.startsWith(".tmp-")),
        [],
      );
    });

    it("keeps the tree of an earlier SHA as it was after later commits", async () => {
      const before = await checkoutTree(repo.dir, first, cache);
      const later = repo.commit("third", { "apps/web/cm.yaml": CM("web", "3") });
      const afterDir = await checkoutTree(repo.dir, later, cache);
      assert.notEqual(afterDir, before);
      assert.equal(readFileSync(join(before, "apps/web/cm.yaml"), "utf8"), CM("web"));
      assert.equal(readFileSync(join(afterDir, "apps/web/cm.yaml"), "utf8"), CM("web", "3"));
      assert.equal(await checkoutTree(repo.dir, first, cache), before);
      assert.equal(readFileSync(join(before, "apps/web/cm.yaml"), "utf8"), CM("web"));
    });

    it("reuses the cached tree without asking git again", async () => {
      const dir = await checkoutTree(repo.dir, second, cache);
      const marker = join(dir, "apps/db/cm.yaml");
      const inode = lstatSync(marker).ino;
      // A directory that is not a repository proves git is not consulted for a cached SHA.
      const notARepo = tempDir();
      try {
        assert.equal(await checkoutTree(notARepo, second, cache), dir);
        assert.equal(lstatSync(marker).ino, inode);
      } finally {
        cleanup(notARepo);
      }
    });

    it("serves concurrent callers one complete tree", async () => {
      const fresh = tempDir("syncward-cache-");
      try {
        const dirs = await Promise.all(
          Array.from({ length: 8 }, () => checkoutTree(repo.dir, feature, fresh)),
        );
        assert.equal(new Set(dirs).size, 1);
        assert.equal(readFileSync(join(fresh, feature, "apps/web/extra.yaml"), "utf8"), CM("extra"));
        assert.deepEqual(
          readdirSync(fresh).filter((n) => n !== ".meta"),
          [feature],
        );
      } finally {
        cleanup(fresh);
      }
    });

    it("ignores what a crashed extraction left behind", async () => {
      const fresh = tempDir("syncward-cache-");
      try {
        // A half-written temporary tree from a crash is never mistaken for the tree.
        mkdirSync(join(fresh, `.tmp-${first.slice(0, 12)}-crashed`, "apps"), { recursive: true });
        writeFileSync(
          join(fresh, `.tmp-${first.slice(0, 12)}-crashed`, "apps", "half.yaml"),
          "apiVersion: v",
        );
        const crashed = join(fresh, `.tmp-${first.slice(0, 12)}-crashed`);
        const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
        utimesSync(crashed, hoursAgo, hoursAgo);
        const dir = await checkoutTree(repo.dir, first, fresh);
        assert.ok(existsSync(join(dir, "apps/api/cm.yaml")));
        assert.ok(!existsSync(join(dir, "apps/half.yaml")));
        // ...and an old one is swept away.
        assert.deepEqual(
          readdirSync(fresh).filter((n) => n !== ".meta"),
          [first],
        );
      } finally {
        cleanup(fresh);
      }
    });

    it("refuses anything but a full SHA, and an unknown SHA", async () => {
      await assert.rejects(checkoutTree(repo.dir, "main", cache), /expected a full commit SHA/);
      await assert.rejects(checkoutTree(repo.dir, first.slice(0, 12), cache), /expected a full commit SHA/);
      const unknown = "1".repeat(40);
      await assert.rejects(checkoutTree(repo.dir, unknown, cache), {
        name: "SourceError",
        message: `revision '${unknown}' not found in ${repo.dir}`,
      });
      assert.ok(!existsSync(join(cache, unknown)));
    });
  });
});
