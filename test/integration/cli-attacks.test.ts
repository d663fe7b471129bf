// The same kubectl attacks with selfHeal off, seen through the CLI as a person would: `app get`
// reads OutOfSync and names the field manager, `app diff` shows the change and who made it (an
// addition as a removal), and a manual `app sync` reverts it: live equals Git again.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { parse } from "yaml";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { compareObjects } from "../../src/engine/diff/index.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { ATTACKS, type Live, WEB_YAML } from "../support/attacks.ts";
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

describe("kubectl attacks with selfHeal off: reported by the CLI, reverted by a manual sync", () => {
  let ns = "";
  let common: string[] = [];
  const live = async () => (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as Live;
  const git = () => ({ ...(parse(WEB_YAML) as KubeObject), metadata: { name: "web", namespace: ns } });

  before(async () => {
    ns = await cluster.namespace("cli-attack");
    const stateNs = await cluster.stateNamespace("cli-attack-state");
    const repo = makeRepo({
      ".github/syncward.yml": `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n    syncPolicy: {automated: {prune: true, selfHeal: false}}\n`,
      "app/web.yaml": WEB_YAML,
    });
    common = [
      "--repo",
      repo.dir,
      "--kubeconfig",
      cluster.syncwardKubeconfig,
      "--app",
      "shop",
      "--state-namespace",
      stateNs,
    ];
    const first = await run(["app", "sync", "dev", ...common]);
    assert.equal(first.code, 0, first.err);
  });

  for (const attack of ATTACKS) {
    it(`${attack.name}: OutOfSync naming ${attack.manager}, reverted by app sync`, async () => {
      attack.run(ns);

      const get = await run(["app", "get", "dev", ...common]);
      assert.match(get.out, /^Sync Status:\s+OutOfSync/m, get.out);
      const row = get.out.split("\n").find((l) => /Deployment\s+\S+\s+web\s/.test(l)) ?? "";
      assert.match(row, /OutOfSync/);
      assert.match(row, new RegExp(`\\(by [^)]*\\b${attack.manager}\\b`), row);

      const diff = await run(["app", "diff", "dev", ...common]);
      assert.equal(diff.code, 1, "a diff exists");
      assert.match(
        diff.out,
        new RegExp(`# ${attack.path.source.slice(1, -1)}: (added|changed) by ${attack.manager} \\(Update`),
        diff.out,
      );
      if (!/replicas|image|env/.test(attack.name))
        assert.match(diff.out, /^-\s/m, "an addition reads as a removal");

      const sync = await run(["app", "sync", "dev", ...common]);
      assert.equal(sync.code, 0, sync.out + sync.err);
      assert.match(sync.out, /Operation: Succeeded/);
      const after = await live();
      assert.equal(attack.reverted(after), true, "the attack's change is gone");
      assert.deepEqual(compareObjects(git(), after).differences, [], "live equals Git plus defaults");

      const again = await run(["app", "get", "dev", ...common]);
      assert.match(again.out, /^Sync Status:\s+Synced/m, again.out);
    });
  }
});
