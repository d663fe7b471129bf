import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fieldsV1Paths } from "../../../src/engine/diff/fields-v1.ts";
import { fieldManagersOf } from "../../../src/engine/diff/index.ts";
import { fixture } from "./fixtures.ts";

const live = fixture("deployment.live.yaml");
const scaled = fixture("deployment.live-scaled.yaml");
const edited = fixture("deployment.live-edited.yaml");
const service = fixture("service.live.yaml");

describe("fieldManagersOf", () => {
  const cases: Array<[string, typeof live, string, string[]]> = [
    ["replicas scaled by the HPA (scale subresource)", scaled, "/spec/replicas", ["kube-controller-manager"]],
    ["replicas as applied", live, "/spec/replicas", ["syncward"]],
    ["the sidecar kubectl edit added", edited, "/spec/template/spec/containers/1", ["kubectl-edit"]],
    ["a field of the sidecar", edited, "/spec/template/spec/containers/1/image", ["kubectl-edit"]],
    ["syncward's container image", edited, "/spec/template/spec/containers/0/image", ["syncward"]],
    ["an env var matched by its k: key", live, "/spec/template/spec/containers/0/env/1/value", ["syncward"]],
    [
      "a port keyed by containerPort and protocol",
      live,
      "/spec/template/spec/containers/0/ports/0/name",
      ["syncward"],
    ],
    [
      "the containers list: everyone who owns an item in it",
      edited,
      "/spec/template/spec/containers",
      ["syncward", "kubectl-edit"],
    ],
    [
      "a revision annotation (~1 escape)",
      live,
      "/metadata/annotations/deployment.kubernetes.io~1revision",
      ["kube-controller-manager"],
    ],
    [
      "status through the status subresource",
      live,
      "/status/conditions/0/reason",
      ["kube-controller-manager"],
    ],
    [
      "inside an atomic field (selector is a leaf)",
      live,
      "/spec/selector/matchLabels/app.kubernetes.io~1name",
      ["syncward"],
    ],
    ["a server default nobody owns", live, "/spec/progressDeadlineSeconds", []],
    ["a field that does not exist", live, "/spec/paused", []],
    ["Service port keyed by port and protocol", service, "/spec/ports/0/targetPort", ["syncward"]],
  ];
  for (const [name, obj, pointer, expected] of cases) {
    it(name, () => assert.deepEqual(fieldManagersOf(obj, pointer), expected));
  }

  it("an object without managedFields has no owners", () => {
    const bare = structuredClone(live);
    delete bare.metadata.managedFields;
    assert.deepEqual(fieldManagersOf(bare, "/spec/replicas"), []);
  });
});

describe("fieldsV1Paths", () => {
  it("converts f:, k:, v:, i: and . into paths of the object", () => {
    const target = {
      metadata: { finalizers: ["a.example.com/cleanup", "b.example.com/keep"] },
      spec: {
        containers: [{ name: "a" }, { name: "b", ports: [{ containerPort: 80, protocol: "TCP" }] }],
        args: ["x", "y"],
      },
    };
    const fields = fieldsV1Paths(
      {
        "f:metadata": { "f:finalizers": { ".": {}, 'v:"b.example.com/keep"': {} } },
        "f:spec": {
          "f:containers": {
            'k:{"name":"b"}': {
              ".": {},
              "f:ports": { 'k:{"containerPort":80,"protocol":"TCP"}': { "f:containerPort": {} } },
            },
            'k:{"name":"missing"}': { ".": {}, "f:image": {} },
          },
          "f:args": { "i:1": {} },
        },
      },
      target,
    );
    assert.deepEqual(fields, [
      { path: ["metadata", "finalizers"], leaf: false, item: false },
      { path: ["metadata", "finalizers", 1], leaf: true, item: true },
      { path: ["spec", "containers", 1], leaf: false, item: true },
      { path: ["spec", "containers", 1, "ports", 0, "containerPort"], leaf: true, item: false },
      { path: ["spec", "args", 1], leaf: true, item: true },
    ]);
  });
});
