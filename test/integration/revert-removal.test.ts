// The removal patch against a real API server: guarded by resourceVersion, so a decision made on
// an object that changed meanwhile is made again on the object as it now is.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { removeForeignAdditions } from "../../src/engine/revert/index.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { ATTACKS, type Live, WEB_YAML } from "../support/attacks.ts";
import { kubectl, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";

const cluster = useCluster();
const attack = (name: string) => ATTACKS.find((a) => a.name.startsWith(name)) as (typeof ATTACKS)[number];

describe("removeForeignAdditions", () => {
  it("read stale (the object changed after it was read): reads it again and removes what is there now", async () => {
    const ns = await cluster.namespace("revert");
    const desired = { ...(parse(WEB_YAML) as KubeObject) };
    desired.metadata = { ...desired.metadata, namespace: ns };
    await cluster.client.apply(desired);
    attack("added sidecar").run(ns);
    const stale = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as Live;
    // After the read: a hostPath volume too, so the object's resourceVersion moved on.
    kubectl([
      "-n",
      ns,
      "patch",
      "deployment/web",
      "-p",
      '{"spec":{"template":{"spec":{"volumes":[{"name":"h","hostPath":{"path":"/"}}]}}}}',
    ]);
    const after = (await removeForeignAdditions(cluster.client, desired, stale, envConfig(ns))) as Live;
    assert.notEqual(after.metadata.resourceVersion, stale.metadata.resourceVersion);
    assert.deepEqual(
      after.spec.template.spec.containers.map((c) => c.name),
      ["web"],
    );
    assert.equal(after.spec.template.spec.volumes, undefined, "the addition made after the read is gone too");
  });

  it("nothing added: no write", async () => {
    const ns = await cluster.namespace("revert");
    const desired = { ...(parse(WEB_YAML) as KubeObject) };
    desired.metadata = { ...desired.metadata, namespace: ns };
    const live = await cluster.client.apply(desired);
    const writes = cluster.client.counts.writes;
    const same = await removeForeignAdditions(cluster.client, desired, live, envConfig(ns));
    assert.equal(same, live);
    assert.equal(cluster.client.counts.writes, writes);
  });
});
