// The CLI's app identity: two checkouts that are both called `repo` (of two repositories, or with
// no remote at all) are two apps with two states, not one; a checkout's state from before
// identities (named after the directory) moves over on the first command.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { checkoutApp } from "../../src/cli/app-identity.ts";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { StateStore } from "../../src/state/store.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
  const code = await main(args, io);
  return { code, out, err };
}

/** A checkout in a directory called `repo`, cloned from its own upstream (or with no remote). */
function checkout(ns: string, remote: boolean): string {
  const upstream = makeRepo({
    ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n`,
    "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: '1'}\n",
  });
  const dir = join(mkdtempSync(join(tmpdir(), "syncward-checkout-")), "repo");
  execFileSync("git", ["clone", "-q", upstream.dir, dir]);
  if (!remote) execFileSync("git", ["remote", "remove", "origin"], { cwd: dir });
  return dir;
}

describe("the CLI's app identity", () => {
  for (const remote of [true, false]) {
    it(`two checkouts called repo (${remote ? "two remotes" : "no remote"}) do not share state`, async () => {
      const ns = await cluster.namespace("cli-id");
      const stateNs = await cluster.stateNamespace("cli-id-state");
      const [one, two] = [checkout(ns, remote), checkout(ns, remote)];
      const common = (dir: string) => [
        "--repo",
        dir,
        "--kubeconfig",
        cluster.syncwardKubeconfig,
        "--state-namespace",
        stateNs,
      ];
      const frozen = await run(["app", "freeze", "dev", "--reason", "release night", ...common(one)]);
      assert.equal(frozen.code, 0, frozen.err);
      const other = await run(["app", "get", "dev", ...common(two)]);
      assert.equal(other.code, 0, other.err);
      assert.doesNotMatch(other.out, /Frozen/, "the other checkout is not frozen");
      assert.match(other.out, /^Name:\s+repo\.dev$/m, "people still read the directory's name");
      const mine = await run(["app", "get", "dev", ...common(one)]);
      assert.match(mine.out, /Frozen by \S+ since \S+ \(release night\)/);
      assert.notEqual(checkoutApp(one).id, checkoutApp(two).id);
      assert.match(checkoutApp(one).id, /^local_[0-9a-f]{12}$/, "never a GitHub repository's gh_<id>");
    });
  }

  it("moves a checkout's state from before identities (named after the directory), unless an installed repository claimed it", async () => {
    const ns = await cluster.namespace("cli-id");
    const stateNs = await cluster.stateNamespace("cli-id-state");
    const [dir, claimedDir] = [checkout(ns, true), checkout(ns, true)];
    const store = new StateStore(cluster.syncwardClient, stateNs);
    // The CLI named it repo.dev, unclaimed; an installed repository's state carries its claim.
    await store.update("repo.dev", (s) => {
      s.freeze = { by: "carol", at: new Date().toISOString(), reason: "from before" };
    });
    const common = (d: string) => [
      "--repo",
      d,
      "--kubeconfig",
      cluster.syncwardKubeconfig,
      "--state-namespace",
      stateNs,
    ];
    const got = await run(["app", "get", "dev", ...common(dir)]);
    assert.match(got.out, /Frozen by carol since \S+ \(from before\)/);
    assert.equal((await store.stored("repo.dev"))?.movedTo, `${checkoutApp(dir).id}.dev`);
    // The second checkout called repo finds it moved already: it starts afresh.
    assert.doesNotMatch((await run(["app", "get", "dev", ...common(claimedDir)])).out, /Frozen/);
    // A state claimed by an installed repository is never the CLI's.
    const claimed = new StateStore(cluster.syncwardClient, stateNs, { repository: "acme/repo" });
    await claimed.update("other.dev", (s) => {
      s.freeze = { by: "carol", at: new Date().toISOString(), reason: "installed" };
    });
    const named = await run(["app", "get", "dev", "--app", "other", ...common(dir)]);
    assert.doesNotMatch(named.out, /Frozen/);
    assert.equal((await store.stored("other.dev"))?.movedTo, undefined);
  });
});
