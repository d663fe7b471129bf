// Projects on the real control plane: the operator's project, not the repository, decides where a
// repository deploys. A destination outside the project is refused with nothing applied, a
// project's deny window holds a repository that has none, and with impersonation the API server
// itself refuses what the project's ServiceAccount may not do, while syncward's own ServiceAccount
// (deploy/ with components/impersonation) holds no write on application kinds at all.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { useCluster } from "../support/cluster.ts";
import { configMap, projectsFile, run, teamA, teamRepo, where } from "../support/projects.ts";

const cluster = useCluster();

describe("projects", () => {
  it("refuses a repository whose destination is outside its project's namespaces, with nothing applied", async () => {
    const ns = await cluster.namespace("team-b");
    const state = await cluster.stateNamespace("proj-state");
    const repo = teamRepo("team-a-shop", ns, { "settings.yaml": configMap("settings") });
    const projects = projectsFile([teamA()]);
    const common = where(repo.dir, cluster.syncwardKubeconfig, state);
    const sync = await run(["app", "sync", "dev", ...common, "--projects", projects]);
    assert.notEqual(sync.code, 0, sync.out);
    assert.match(
      sync.out + sync.err,
      new RegExp(
        `refused by the operator's project: environment dev: destination\\.namespace "${ns}" is outside project team-a \\(destinations\\[\\]\\.namespace on syncward's own cluster: team-a-\\*\\)`,
      ),
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined, "nothing applied");

    // The same repository with no projects configured syncs as before.
    const free = await run(["app", "sync", "dev", ...common]);
    assert.equal(free.code, 0, free.out + free.err);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "settings"));
  });

  it("refuses a repository asking for kube-system under a project that allows team-a-*, and one no project covers", async () => {
    const name = `proj-${randomBytes(3).toString("hex")}`;
    const state = await cluster.stateNamespace("proj-state");
    const repo = teamRepo("team-a-infra", "kube-system", { "cm.yaml": configMap(name) });
    const common = where(repo.dir, cluster.syncwardKubeconfig, state);
    const sync = await run(["app", "sync", "dev", ...common, "--projects", projectsFile([teamA()])]);
    assert.notEqual(sync.code, 0);
    assert.match(sync.out + sync.err, /destination\.namespace "kube-system" is outside project team-a/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", "kube-system", name), undefined);

    const other = await run([
      "app",
      "sync",
      "dev",
      ...common,
      "--projects",
      projectsFile([{ ...teamA(), repositories: ["acme/payments"] }]),
    ]);
    assert.equal(other.code, 2, other.out + other.err);
    assert.match(other.err, /refused: acme\/team-a-infra belongs to no project/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", "kube-system", name), undefined);
  });

  it("holds a repository without windows in its project's deny window; app get shows the project", async () => {
    const ns = await cluster.namespace("team-a");
    const state = await cluster.stateNamespace("proj-state");
    const repo = teamRepo("team-a-api", ns, { "settings.yaml": configMap("settings") });
    const common = where(repo.dir, cluster.syncwardKubeconfig, state);
    const frozen = projectsFile([
      teamA({ syncWindows: [{ kind: "deny", schedule: "* * * * *", duration: "1h" }] }),
    ]);
    const held = await run(["app", "sync", "dev", ...common, "--projects", frozen]);
    assert.notEqual(held.code, 0, held.out);
    assert.match(held.out + held.err, /deny window #0 "\* \* \* \* \*" for 1h of project team-a/);
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined, "nothing applied");
    const get = await run(["app", "get", "dev", ...common, "--projects", frozen]);
    assert.match(get.out, /^Project:\s+team-a$/m);

    const open = await run(["app", "sync", "dev", ...common, "--projects", projectsFile([teamA()])]);
    assert.equal(open.code, 0, open.out + open.err);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "settings"));
  });
});
