// Branch heads read from the ref files (no git process) must always be what `git rev-parse` says:
// after a commit, a push, `git pack-refs`, in a clone, and in a worktree (where the files are not
// read at all). Real git throughout.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { headOf } from "../../../src/source/git.ts";
import {
  branchHeadFromFiles,
  looseRefSha,
  packedRefSha,
  plainBranchName,
} from "../../../src/source/git-refs.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

/** git in an existing directory (a clone, a worktree), as TestRepo runs it. */
function gitIn(dir: string, ...args: string[]): string {
  const who = { GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@example.com" };
  return execFileSync("git", ["-c", "commit.gpgsign=false", ...args], {
    cwd: dir,
    env: {
      ...process.env,
      ...who,
      GIT_COMMITTER_NAME: "T",
      GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_CONFIG_GLOBAL: "/dev/null",
    },
    encoding: "utf8",
  }).trim();
}

function commitIn(dir: string, file: string, text: string): string {
  writeFileSync(join(dir, file), text);
  gitIn(dir, "add", "--all");
  gitIn(dir, "commit", "--quiet", "-m", `change ${file}`);
  return gitIn(dir, "rev-parse", "HEAD");
}

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("ref files: pure parts", () => {
  const names: Array<[string, boolean]> = [
    ["main", true],
    ["feature/login-v2", true],
    ["release_1.2", true],
    ["feat/$(touch;x)|a&b>'\"", true],
    ["", false],
    ["-x", false],
    ["HEAD", false],
    ["a..b", false],
    ["a b", false],
    ["a\tb", false],
    ["a~1", false],
    ["a^", false],
    ["a:b", false],
    ["a?", false],
    ["a*", false],
    ["a[b", false],
    ["a\\b", false],
    ["a@{1}", false],
    ["@", false],
    ["x/@", false],
    ["/a", false],
    ["a/", false],
    ["a//b", false],
    ["a.", false],
    [".hidden", false],
    ["a/.b", false],
    ["x.lock", false],
    ["x.lock/y", false],
    ["../../etc/passwd", false],
    ["a\u007fb", false],
  ];
  for (const [name, plain] of names) {
    it(`${JSON.stringify(name)} is ${plain ? "" : "not "}read from the files`, () => {
      assert.equal(plainBranchName(name), plain);
    });
  }

  const loose: Array<[string, string | undefined]> = [
    [`${A}\n`, A],
    [A, A],
    [`${A}\n\n`, undefined],
    [`${A.toUpperCase()}\n`, undefined],
    ["ref: refs/heads/main\n", undefined],
    [`${"c".repeat(64)}\n`, "c".repeat(64)],
    [`${"c".repeat(41)}\n`, undefined],
    ["", undefined],
  ];
  for (const [text, sha] of loose) {
    it(`a loose ref file ${JSON.stringify(text.slice(0, 24))} gives ${sha ? "its SHA" : "nothing"}`, () => {
      assert.equal(looseRefSha(text), sha);
    });
  }

  const packed = `# pack-refs with: peeled fully-peeled sorted \n${A} refs/heads/main\n${B} refs/heads/main-2\n${A} refs/tags/v1\n^${B}\n${B} refs/remotes/origin/x/main\n`;
  const cases: Array<[string, string, ReturnType<typeof packedRefSha>]> = [
    [packed, "refs/heads/main", { sha: A }],
    [packed, "refs/heads/main-2", { sha: B }],
    [packed, "refs/remotes/origin/x/main", { sha: B }],
    [packed, "refs/heads/x/main", { missing: true }],
    [packed, "refs/remotes/origin/main", { missing: true }],
    [packed, "refs/heads/v1", { missing: true }],
    [packed.slice(0, -1), "refs/remotes/origin/x/main", { sha: B }],
    ["", "refs/heads/main", { missing: true }],
    [`zz refs/heads/main\n`, "refs/heads/main", undefined],
  ];
  for (const [text, ref, expected] of cases) {
    it(`packed-refs: ${ref} in ${text.length} bytes -> ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(packedRefSha(text, ref), expected);
    });
  }
});

describe("branch heads from the ref files, against real git", () => {
  let repo: TestRepo;
  const dirs: string[] = [];
  const rev = (r: TestRepo, ref: string) => r.git("rev-parse", "--verify", `${ref}^{commit}`);

  before(() => {
    repo = new TestRepo();
    repo.commit("first", { "app/cm.yaml": "a: 1\n" });
    repo.git("branch", "feature");
    dirs.push(repo.dir);
  });
  after(() => cleanup(...dirs));

  it("reads a fresh repository's head from its loose ref, as git does", async () => {
    const head = rev(repo, "main");
    assert.equal(await branchHeadFromFiles(repo.dir, "main"), head);
    assert.equal(await headOf(repo.dir, "main"), head);
    assert.equal(await headOf(repo.dir, "main"), head);
  });

  it("sees a new commit on the very next read", async () => {
    for (let i = 0; i < 3; i++) {
      const sha = repo.commit(`change ${i}`, { "app/cm.yaml": `a: ${i + 2}\n` });
      assert.equal(await headOf(repo.dir, "main"), sha);
      assert.equal(await branchHeadFromFiles(repo.dir, "main"), sha);
    }
  });

  it("sees a push into the repository on the next read", async () => {
    const clone = new TestRepo(tempDir("syncward-pusher-"));
    dirs.push(clone.dir);
    clone.git("remote", "add", "origin", repo.dir);
    clone.git("fetch", "--quiet", "origin");
    clone.git("checkout", "--quiet", "-b", "feature", "origin/feature");
    assert.equal(await headOf(repo.dir, "feature"), rev(clone, "feature"));
    const pushed = clone.commit("pushed", { "app/pushed.yaml": "b: 1\n" });
    clone.git("push", "--quiet", "origin", "feature");
    assert.equal(await headOf(repo.dir, "feature"), pushed);
  });

  it("reads packed refs (git pack-refs --all), then the loose ref a later commit writes", async () => {
    const before = rev(repo, "main");
    repo.git("pack-refs", "--all");
    assert.ok(!existsSync(join(repo.dir, ".git", "refs", "heads", "main")), "main is packed");
    assert.equal(await branchHeadFromFiles(repo.dir, "main"), before);
    assert.equal(await headOf(repo.dir, "main"), before);
    const after = repo.commit("after packing", { "app/cm.yaml": "a: 9\n" });
    assert.equal(await headOf(repo.dir, "main"), after);
    assert.equal(rev(repo, "main"), after);
  });

  it("falls back to origin/<branch> in a clone (packed by git clone, then fetched loose)", async () => {
    const parent = tempDir("syncward-clone-");
    dirs.push(parent);
    const cloneDir = join(parent, "c");
    repo.git("clone", "--quiet", repo.dir, cloneDir);
    assert.equal(await branchHeadFromFiles(cloneDir, "feature"), rev(repo, "feature"));
    assert.equal(await headOf(cloneDir, "feature"), rev(repo, "feature"));
    const moved = repo.commit("moved on", { "app/cm.yaml": "a: 10\n" });
    gitIn(cloneDir, "fetch", "--quiet", "origin");
    gitIn(cloneDir, "checkout", "--quiet", "--detach");
    const local = gitIn(cloneDir, "rev-parse", "main");
    assert.notEqual(local, moved);
    assert.equal(await headOf(cloneDir, "main"), local, "the local branch comes first");
    gitIn(cloneDir, "branch", "--quiet", "-D", "main");
    assert.equal(await headOf(cloneDir, "main"), moved, "then origin/main");
  });

  it("asks git in a worktree (a .git file), and sees commits made there", async () => {
    const parent = tempDir("syncward-worktree-");
    dirs.push(parent);
    const wt = join(parent, "wt");
    repo.git("worktree", "add", "--quiet", "-b", "wt-branch", wt, "main");
    assert.equal(await branchHeadFromFiles(wt, "wt-branch"), undefined);
    assert.equal(await headOf(wt, "wt-branch"), rev(repo, "main"));
    const made = commitIn(wt, "wt.yaml", "w: 1\n");
    assert.equal(await headOf(wt, "wt-branch"), made);
    assert.equal(await headOf(repo.dir, "wt-branch"), made);
    assert.equal(await headOf(wt, "main"), rev(repo, "main"));
  });

  it("asks git for a symbolic ref, and answers what git answers", async () => {
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main");
    assert.equal(await branchHeadFromFiles(repo.dir, "alias"), undefined);
    assert.equal(await headOf(repo.dir, "alias"), rev(repo, "main"));
  });

  it("never takes a ref that names no commit for a head", async () => {
    const tree = repo.git("rev-parse", "main^{tree}");
    // git refuses to point a branch at a tree; a hand-edited file can.
    writeFileSync(join(repo.dir, ".git", "refs", "heads", "not-a-commit"), `${tree}\n`);
    assert.equal(await branchHeadFromFiles(repo.dir, "not-a-commit"), tree);
    await assert.rejects(headOf(repo.dir, "not-a-commit"), {
      name: "SourceError",
      message:
        /refs\/heads\/not-a-commit\^\{commit\}: expected commit type, but the object dereferences to tree type/,
    });
  });

  it("is not sure of a reftable repository or a redirecting GIT_DIR", async () => {
    const marked = new TestRepo();
    dirs.push(marked.dir);
    const head = marked.commit("one", { "x.yaml": "x: 1\n" });
    assert.equal(await branchHeadFromFiles(marked.dir, "main"), head);
    assert.equal(await branchHeadFromFiles(marked.dir, "main", { GIT_DIR: "/elsewhere" }), undefined);
    mkdirSync(join(marked.dir, ".git", "reftable"));
    assert.equal(await branchHeadFromFiles(marked.dir, "main"), undefined);
  });

  it("keeps git's errors for a missing branch and for a name that is no branch", async () => {
    await assert.rejects(headOf(repo.dir, "nope"), (err: unknown) => {
      assert.ok(err instanceof SourceError);
      assert.equal(err.message, `branch 'nope' not found in ${repo.dir}`);
      return true;
    });
    for (const bad of ["", "-x", "refs/heads/main"]) {
      await assert.rejects(headOf(repo.dir, bad), {
        name: "SourceError",
        message: `'${bad}' is not a branch name`,
      });
    }
    for (const odd of ["../../HEAD", "a..b", "x.lock"]) {
      await assert.rejects(headOf(repo.dir, odd), {
        name: "SourceError",
        message: `branch '${odd}' not found in ${repo.dir}`,
      });
    }
    const notRepo = tempDir();
    dirs.push(notRepo);
    await assert.rejects(headOf(notRepo, "main"), /is not a git repository/);
  });
});
