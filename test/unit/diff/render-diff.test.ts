import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { renderDiff } from "../../../src/engine/diff/index.ts";
import type { CompareOptions } from "../../../src/engine/diff/types.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { type Any, edit, FIXTURES, fixture, rule } from "./fixtures.ts";

const desired = fixture("deployment.desired.yaml");
const live = fixture("deployment.live.yaml");
const scaled = fixture("deployment.live-scaled.yaml");
const expected = (name: string) => readFileSync(join(FIXTURES, "expected", name), "utf8");

const golden: Array<[string, KubeObject, KubeObject, string]> = [
  ["replicas", desired, scaled, "deployment-scaled.diff"],
  ["sidecar added", desired, fixture("deployment.live-edited.yaml"), "deployment-edited.diff"],
  [
    "several changes: two hunks, quantities in desired's spelling where equal",
    desired,
    edit(scaled, (o: Any) => {
      o.metadata.labels["app.kubernetes.io/part-of"] = "checkout";
      o.spec.template.spec.containers[0].image = "ghcr.io/acme/web:1.5.0";
      o.spec.template.spec.containers[0].resources.limits.cpu = "2";
      o.spec.template.spec.containers[0].env.pop();
    }),
    "deployment-several.diff",
  ],
  [
    "a line inside a multi-line ConfigMap value",
    fixture("configmap.desired.yaml"),
    fixture("configmap.live.yaml"),
    "configmap.diff",
  ],
];

describe("renderDiff", () => {
  for (const [name, d, l, file] of golden) {
    it(name, () => assert.equal(renderDiff(d, l), expected(file)));
  }

  const empty: Array<[string, KubeObject, KubeObject, CompareOptions?]> = [
    ["in sync", desired, live],
    [
      "ignored by a rule",
      desired,
      scaled,
      { ignoreDifferences: [rule({ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] })] },
    ],
    ["Service with server defaults", fixture("service.desired.yaml"), fixture("service.live.yaml")],
  ];
  for (const [name, d, l, options] of empty) {
    it(`is empty: ${name}`, () => assert.equal(renderDiff(d, l, options), ""));
  }

  it("does not flood the diff with server defaults, status or managedFields", () => {
    const diff = renderDiff(desired, scaled);
    for (const noise of [
      "progressDeadlineSeconds",
      "terminationMessagePath",
      "managedFields",
      "status:",
      "resourceVersion",
      "dnsPolicy",
    ]) {
      assert.ok(!diff.includes(noise), `${noise} in diff`);
    }
  });

  it("names core objects by their key", () => {
    const diff = renderDiff(fixture("configmap.desired.yaml"), fixture("configmap.live.yaml"));
    assert.match(
      diff,
      /^--- live\/\/ConfigMap:shop\/web-config\n\+\+\+ desired\/\/ConfigMap:shop\/web-config\n/,
    );
  });

  it("takes the namespace from live when the manifest has none", () => {
    const d = edit(desired, (o: Any) => delete o.metadata.namespace);
    assert.match(renderDiff(d, scaled), /^--- live\/apps\/Deployment:shop\/web$/m);
  });

  it("shows a field missing in live as added", () => {
    const d = edit(desired, (o: Any) => (o.spec.minReadySeconds = 10));
    assert.match(renderDiff(d, live), /^\+ {2}minReadySeconds: 10$/m);
  });
});
