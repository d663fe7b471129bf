// Branch names with shell metacharacters: git accepts them, so syncward must too, without ever
// handing one to a shell (git, tar and kubectl run from argument vectors), and must show them
// inertly in check runs.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import { checkRunOutput } from "../../../src/github/summary.ts";
import { changedFiles, checkoutTree, headOf } from "../../../src/source/git.ts";
import { envConfig, stateOf } from "../../support/summary-fixtures.ts";
import { cleanup, TestRepo, tempDir } from "./helpers.ts";

describe("branch names with shell metacharacters", () => {
  let repo: TestRepo;
  let cache: string;
  let trap: string;
  let base: string;
  const names: string[] = [];

  before(() => {
    trap = tempDir("syncward-pwned-");
    const pwned = join(trap, "pwned");
    names.push(
      `feat/$(touch\${IFS}${pwned})`,
      `feat/\`touch\${IFS}${pwned}\``,
      `feat/x;touch\${IFS}${pwned}`,
      `feat/a|b&c>${pwned}`,
      `feat/'"$HOME"'`,
    );
    repo = new TestRepo();
    cache = tempDir("syncward-cache-");
    base = repo.commit("base", { "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n" });
    for (const name of names) {
      repo.git("checkout", "--quiet", "-b", name, base);
      repo.commit(`on ${name}`, { [`app/${names.indexOf(name)}.yaml`]: "# nothing\n" });
    }
    repo.git("checkout", "--quiet", "main");
  });
  after(() => cleanup(repo.dir, cache, trap));

  it("git takes every one of them as a branch name", () => {
    const listed = repo.git("branch", "--format=%(refname:short)").split("\n");
    for (const name of names) assert.ok(listed.includes(name), `${name} in ${listed.join(", ")}`);
  });

  it("resolves, diffs and checks out each branch, and nothing is executed", async () => {
    for (const name of names) {
      const sha = await headOf(repo.dir, name);
      assert.match(sha, /^[0-9a-f]{40}$/);
      assert.deepEqual(await changedFiles(repo.dir, base, name), [`app/${names.indexOf(name)}.yaml`]);
      const tree = await checkoutTree(repo.dir, sha, cache);
      assert.ok(existsSync(join(tree, "app/cm.yaml")));
    }
    assert.deepEqual(readdirSync(trap), [], "no shell ran any of the names");
  });

  it("the config accepts such a branch, and refuses one with a space or a newline", () => {
    const config = (branch: string) =>
      `environments:\n  - name: dev\n    source: {path: app, branch: ${JSON.stringify(branch)}}\n    destination: {namespace: dev}\n`;
    assert.equal(parseConfig(config(names[1]!)).environments[0]?.source.branch, names[1]);
    for (const bad of ["feat/$(touch /tmp/pwned)", "feat/x\ntouch"]) {
      assert.throws(
        () => parseConfig(config(bad)),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /is not a valid branch name/);
          return true;
        },
      );
    }
  });

  it("check runs show the name in a code span it cannot close", () => {
    const branch = names[1]!; // feat/`touch${IFS}…`
    const out = checkRunOutput({
      env: envConfig({ source: { path: "app", branch } }),
      state: stateOf(),
      repoBranch: branch,
      effectivePolicy: "Manual",
    });
    assert.ok(out.text.includes(`- **Source:** \`app\` on \`\` ${branch} \`\``), out.text);
  });
});
