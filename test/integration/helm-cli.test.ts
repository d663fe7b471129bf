// The CLI over a chart source: `app get` names the chart and its version, `app diff` shows what a
// values change does to the rendered objects, and `app sync` applies it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { ensureHelm, fixtureFiles } from "../support/helm.ts";

const cluster = useCluster();
ensureHelm();

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
  const code = await main(args, io);
  return { code, out, err };
}

describe("syncward app with a Helm chart source", () => {
  it("get shows the chart, diff the rendered difference of a values change, sync applies it", async () => {
    const ns = await cluster.namespace("helm-cli");
    const stateNs = await cluster.stateNamespace("helm-cli-state");
    const repo = makeRepo({
      ".github/syncward.yml": `environments:\n  - name: staging\n    source:\n      path: charts/web\n      helm:\n        valueFiles: [values-prod.yaml]\n        parameters: [{name: image.tag, value: "2.1.0"}]\n    destination: {namespace: ${ns}}\n`,
      ...fixtureFiles("test/fixtures/helm/web", "charts/web"),
    });
    const common = [
      "--repo",
      repo.dir,
      "--kubeconfig",
      cluster.syncwardKubeconfig,
      "--app",
      "shop",
      "--state-namespace",
      stateNs,
    ];

    const sync = await run(["app", "sync", "staging", ...common]);
    assert.equal(sync.code, 0, sync.err + sync.out);
    assert.match(sync.out, /deployment\.apps\/staging-web created/);

    const get = await run(["app", "get", "staging", ...common]);
    assert.match(get.out, /^Chart:\s+web 1\.4\.2$/m);
    assert.match(get.out, /^apps\s+Deployment\s+\S+\s+staging-web\s+Synced/m);
    const json = JSON.parse((await run(["app", "get", "staging", "-o", "json", ...common])).out);
    assert.deepEqual(json.chart, { name: "web", version: "1.4.2" });

    repo.commit({
      ".github/syncward.yml": `environments:\n  - name: staging\n    source:\n      path: charts/web\n      helm:\n        valueFiles: [values-prod.yaml]\n        parameters: [{name: image.tag, value: "2.2.0"}]\n    destination: {namespace: ${ns}}\n`,
    });
    const diff = await run(["app", "diff", "staging", ...common]);
    assert.equal(diff.code, 1, "a parameter change is a change");
    assert.match(diff.out, /-\s+image: registry\.example\.com\/web:2\.1\.0/);
    assert.match(diff.out, /\+\s+image: registry\.example\.com\/web:2\.2\.0/);
    assert.equal((await run(["app", "sync", "staging", ...common])).code, 0);
    assert.equal((await run(["app", "diff", "staging", ...common])).code, 0);
  });
});
