// The app's projects live in the ConfigMap syncward-projects of the state namespace: read as
// syncward's ServiceAccount with deploy/'s state Role, and followed so an edit takes effect.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { ConfigError } from "../../src/config/config-error.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { loadProjectsConfigMap } from "../../src/projects/configmap.ts";
import { followProjectsConfigMap } from "../../src/projects/follow.ts";
import { useCluster } from "../support/cluster.ts";
import { teamA } from "../support/projects.ts";

const cluster = useCluster();
const projectsConfigMap = (namespace: string, text: string): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "syncward-projects", namespace },
    data: { "projects.yaml": text },
  }) as KubeObject;

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the projects ConfigMap", () => {
  it("none: no projects; a valid one is read; an invalid one is an error naming the ConfigMap and field", async () => {
    const ns = await cluster.stateNamespace("proj-cm");
    assert.equal(await loadProjectsConfigMap(cluster.syncwardClient, ns), undefined);
    await cluster.client.apply(projectsConfigMap(ns, stringify({ projects: [teamA()] })));
    assert.deepEqual(
      (await loadProjectsConfigMap(cluster.syncwardClient, ns))?.projects.map((p) => p.name),
      ["team-a"],
    );
    await cluster.client.apply(projectsConfigMap(ns, "projects: [{name: a, repos: [x]}]\n"));
    await assert.rejects(
      loadProjectsConfigMap(cluster.syncwardClient, ns),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.includes(
          `configmap ${ns}/syncward-projects key projects.yaml: projects[0].repos: unknown field (did you mean "repositories"?)`,
        ),
    );
  });

  it("an edit, a creation and a deletion are each noticed", async () => {
    const ns = await cluster.stateNamespace("proj-follow");
    let changes = 0;
    const stop = followProjectsConfigMap(cluster.syncwardClient, ns, 50, async () => {
      changes++;
    });
    try {
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(changes, 0, "nothing changed yet");
      await cluster.client.apply(projectsConfigMap(ns, stringify({ projects: [teamA()] })));
      await until("the creation", () => changes === 1);
      await cluster.client.apply(projectsConfigMap(ns, stringify({ projects: [teamA({ name: "team-b" })] })));
      await until("the edit", () => changes === 2);
      await cluster.client.delete({
        group: "",
        kind: "ConfigMap",
        namespace: ns,
        name: "syncward-projects",
        apiVersion: "v1",
      });
      await until("the deletion", () => changes === 3);
    } finally {
      stop();
    }
  });
});
