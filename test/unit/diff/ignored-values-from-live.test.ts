import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareObjects, ignoredValuesFromLive } from "../../../src/engine/diff/index.ts";
import { type Any, edit, fixture, rule } from "./fixtures.ts";

const desired = fixture("deployment.desired.yaml");
const scaled = fixture("deployment.live-scaled.yaml");
const edited = fixture("deployment.live-edited.yaml");

describe("ignoredValuesFromLive (RespectIgnoreDifferences)", () => {
  it("keeps the HPA's replicas (managedFieldsManagers) and nothing server-side", () => {
    const rules = [
      rule({ group: "apps", kind: "Deployment", managedFieldsManagers: ["kube-controller-manager"] }),
    ];
    const before = structuredClone(desired);
    const out = ignoredValuesFromLive(desired, scaled, rules);
    assert.deepEqual(
      out,
      edit(desired, (o: Any) => (o.spec.replicas = 5)),
    );
    assert.deepEqual(desired, before, "desired is not mutated");
    assert.notEqual(out, desired);
  });

  it("keeps the HPA's replicas (jsonPointers)", () => {
    const out: Any = ignoredValuesFromLive(desired, scaled, [
      rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }),
    ]);
    assert.equal(out.spec.replicas, 5);
  });

  it("removes an ignored field live lacks", () => {
    const d = edit(desired, (o: Any) => (o.spec.paused = true));
    const out: Any = ignoredValuesFromLive(d, scaled, [
      rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/paused"] }),
    ]);
    assert.equal("paused" in out.spec, false);
  });

  it("adds an ignored map key only live has, creating the map", () => {
    const live = edit(
      scaled,
      (o: Any) =>
        (o.spec.template.metadata.annotations = {
          "kubectl.kubernetes.io/restartedAt": "2025-06-02T12:00:00Z",
        }),
    );
    const out: Any = ignoredValuesFromLive(desired, live, [
      rule({
        group: "apps",
        kind: "Deployment",
        jqPathExpressions: ['.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]'],
      }),
    ]);
    assert.deepEqual(out.spec.template.metadata.annotations, {
      "kubectl.kubernetes.io/restartedAt": "2025-06-02T12:00:00Z",
    });
  });

  it("an ignored container image takes live's value, matched by name", () => {
    const live = edit(scaled, (o: Any) => {
      o.spec.template.spec.containers.unshift({ name: "istio-proxy", image: "istio/proxyv2:1.22.0" });
      o.spec.template.spec.containers[1].image = "ghcr.io/acme/web:canary";
    });
    const out: Any = ignoredValuesFromLive(desired, live, [
      rule({
        group: "apps",
        kind: "Deployment",
        jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == "web") | .image'],
      }),
    ]);
    assert.equal(out.spec.template.spec.containers.length, 1);
    assert.equal(out.spec.template.spec.containers[0].image, "ghcr.io/acme/web:canary");
  });

  it("a sidecar ignored by jq is appended so that Replace would not drop it", () => {
    const out: Any = ignoredValuesFromLive(desired, edited, [
      rule({
        group: "apps",
        kind: "Deployment",
        jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == "log-shipper")'],
      }),
    ]);
    assert.deepEqual(
      out.spec.template.spec.containers.map((c: Any) => c.name),
      ["web", "log-shipper"],
    );
  });

  it("the result compares in sync when only ignored fields differed", () => {
    const rules = [rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] })];
    const out = ignoredValuesFromLive(desired, scaled, rules);
    assert.equal(compareObjects(out, scaled).inSync, true);
  });

  it("rules for other objects change nothing", () => {
    const out = ignoredValuesFromLive(desired, scaled, [
      rule({ group: "apps", kind: "StatefulSet", jsonPointers: ["/spec/replicas"] }),
    ]);
    assert.deepEqual(out, desired);
  });
});
