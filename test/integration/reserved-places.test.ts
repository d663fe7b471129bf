// Reserved places on the real control plane, through the CLI: a destination in syncward's state
// namespace or in kube-system is refused whatever the project's globs allow, with nothing written,
// and an object naming syncward's own ConfigMap is refused too. Upgrading deploy/ (kubectl apply
// of its render) over an edited projects ConfigMap keeps the operator's edit.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, it } from "node:test";
import { useCluster } from "../support/cluster.ts";
import { configMap, projectsFile, run, teamRepo, where } from "../support/projects.ts";

const cluster = useCluster();
const everywhere = { name: "open", repositories: ["acme/*"], destinations: [{ namespace: "*" }] };

describe("reserved places", () => {
  it("a destination in the state namespace or kube-system is refused under a project allowing *, nothing written", async () => {
    const state = await cluster.stateNamespace("reserved-state");
    const name = `r-${randomBytes(3).toString("hex")}`;
    for (const ns of [state, "kube-system"]) {
      const repo = teamRepo("tool", ns, { "cm.yaml": configMap(name) });
      const sync = await run([
        "app",
        "sync",
        "dev",
        ...where(repo.dir, cluster.syncwardKubeconfig, state),
        "--projects",
        projectsFile([everywhere]),
      ]);
      assert.notEqual(sync.code, 0, sync.out);
      assert.match(sync.out + sync.err, new RegExp(`destination\\.namespace "${ns}" is reserved`));
      assert.equal(await cluster.client.get("v1", "ConfigMap", ns, name), undefined, `nothing in ${ns}`);
    }
  });

  it("an object naming syncward's projects ConfigMap in the state namespace is refused, also without projects", async () => {
    const state = await cluster.stateNamespace("reserved-state");
    const ns = await cluster.namespace("tenant");
    const evil = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: syncward-projects, namespace: ${state}}\ndata: {projects.yaml: "projects: []"}\n`;
    const repo = teamRepo("tool", ns, { "evil.yaml": evil }, { policy: { namespaces: [ns, state] } });
    const sync = await run(["app", "sync", "dev", ...where(repo.dir, cluster.syncwardKubeconfig, state)]);
    assert.notEqual(sync.code, 0, sync.out);
    assert.match(sync.out + sync.err, /is reserved/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", state, "syncward-projects"), undefined);
  });

  it("upgrading deploy/ over an edited projects ConfigMap keeps the edit", async () => {
    const ns = await cluster.namespace("deploy-upgrade");
    const edited =
      "projects:\n  - {name: mine, repositories: [acme/mine], destinations: [{namespace: mine}]}\n";
    await cluster.client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "syncward-projects", namespace: ns },
      data: { "projects.yaml": edited },
    });
    const rendered = execFileSync("kubectl", [
      "kustomize",
      join(import.meta.dirname, "..", "..", "deploy"),
    ]).toString();
    const configMaps = rendered.split(/^---$/m).filter((d) => /^kind: ConfigMap$/m.test(d));
    assert.ok(
      configMaps.every((d) => !/^ {2}name: syncward-projects$/m.test(d)),
      "deploy/ never ships the operator's ConfigMap",
    );
    for (const doc of configMaps) {
      const text = doc.replace(/^ {2}namespace: syncward$/m, `  namespace: ${ns}`);
      execFileSync("kubectl", ["--kubeconfig", cluster.kubeconfig, "apply", "--server-side", "-f", "-"], {
        input: text,
      });
    }
    const cm = (await cluster.client.get("v1", "ConfigMap", ns, "syncward-projects")) as {
      data?: Record<string, string>;
    };
    assert.equal(cm.data?.["projects.yaml"], edited);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "syncward-projects-default"));
  });
});
