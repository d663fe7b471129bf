// `syncward app promote`: refused (exit 1, why) while the upstream has not kept its commit Healthy
// for healthyFor; then the upstream's commit is deployed, and `app history` shows the evidence.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
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

const configMap = (v: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {version: "${v}"}\n`;

describe("syncward app promote", () => {
  it("refuses an unproven commit, then promotes it, and history shows the evidence", async () => {
    const staging = await cluster.namespace("clip-stg");
    const prod = await cluster.namespace("clip-prod");
    const stateNs = await cluster.stateNamespace("clip-state");
    const repo = makeRepo({
      ".github/syncward.yml": `environments:
  - name: staging
    source: {path: staging}
    destination: {namespace: ${staging}}
  - name: prod
    source: {path: prod}
    destination: {namespace: ${prod}}
    promotion: {after: staging, healthyFor: 4s}
`,
      "staging/a.yaml": configMap("1"),
      "prod/a.yaml": configMap("1"),
    });
    const common = [
      "--repo",
      repo.dir,
      "--kubeconfig",
      cluster.syncwardKubeconfig,
      "--app",
      "promo",
      "--state-namespace",
      stateNs,
    ];

    const none = await run(["app", "promote", "prod", ...common]);
    assert.equal(none.code, 1);
    assert.match(
      none.err,
      /^app promote: nothing was promoted to prod: staging has not synced any commit yet\n$/,
    );

    assert.equal((await run(["app", "sync", "staging", ...common])).code, 0);
    const early = await run(["app", "promote", "prod", ...common]);
    assert.equal(early.code, 1);
    assert.match(
      early.err,
      /staging runs [0-9a-f]{7}, which is not proven yet \(staging: Healthy for [0-3]s of 4s at this commit\)/,
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", prod, "settings"), undefined);

    await new Promise((r) => setTimeout(r, 4_100));
    const done = await run(["app", "promote", "prod", ...common]);
    assert.equal(done.code, 0, done.err);
    assert.match(done.out, /^Promoted [0-9a-f]{7} to prod: staging: Healthy for \d+s at this commit$/m);
    assert.ok(await cluster.client.get("v1", "ConfigMap", prod, "settings"));

    const history = await run(["app", "history", "prod", ...common]);
    assert.match(
      history.out,
      /\nPROMOTED\n1: syncward app promote prod by \S+: staging: Healthy for \d+s at this commit\n/,
    );
    const json = JSON.parse((await run(["app", "history", "prod", ...common, "-o", "json"])).out);
    assert.deepEqual(json[0].promotion.from, ["staging"]);
    assert.equal(json[0].trigger, "cli");
  });
});
