// The CLI's app identity: a checkout is local_<hash> (never an installed repository's id), and
// `--app gh_<id>` addresses an installed repository's app as the GitHub App names it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { checkoutApp } from "../../../src/cli/app-identity.ts";

/** A directory `<tmp>/<parent>/repo`, a git checkout with `origin` when given. */
function checkout(parent: string, origin?: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), "syncward-identity-")), parent, "repo");
  mkdirSync(dir, { recursive: true });
  if (origin !== undefined) {
    execFileSync("git", ["init", "-q"], { cwd: dir });
    execFileSync("git", ["remote", "add", "origin", origin], { cwd: dir });
  }
  return dir;
}

describe("checkoutApp", () => {
  it("names a checkout local_<hash>, whatever --app says", () => {
    const app = checkoutApp("/nonexistent/repo", "acme-shop");
    assert.match(app.id, /^local_[0-9a-f]+$/);
    assert.equal(app.name, "acme-shop");
    assert.notEqual(
      checkoutApp("/nonexistent/other", "shop").id,
      checkoutApp("/nonexistent/repo", "shop2").id,
    );
  });
  it("gives two checkouts named repo in different directories different identities (no --app)", () => {
    const a = checkoutApp(checkout("team-a"));
    const b = checkoutApp(checkout("team-b"));
    assert.equal(a.name, "repo");
    assert.equal(b.name, "repo");
    assert.notEqual(a.id, b.id, "two directories, two apps: they share no state");
    assert.equal(
      checkoutApp(checkout("team-a")).id === a.id,
      false,
      "another directory of the same name too",
    );
  });
  it("gives checkouts named repo of different origins different identities", () => {
    const a = checkoutApp(checkout("x", "https://github.com/acme/repo.git"));
    const b = checkoutApp(checkout("y", "https://github.com/other/repo.git"));
    assert.notEqual(a.id, b.id);
  });
  it("takes --app gh_<id> as the installed repository's app, with nothing to move from", () => {
    assert.deepEqual(checkoutApp("/nonexistent/repo", "gh_4711"), { id: "gh_4711", name: "gh_4711" });
  });
  it("does not take a name that only looks like one", () => {
    assert.match(checkoutApp("/nonexistent/repo", "gh_47x").id, /^local_/);
  });
});
