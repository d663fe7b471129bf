// jqPathExpressions against jq's own semantics: Argo CD's documented examples, the `and` that must
// short-circuit (a recursive descent that meets strings), slices, and what is an error.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareObjects, IgnoreRuleError } from "../../../src/engine/diff/index.ts";
import { jqPaths } from "../../../src/engine/diff/jq-paths.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { type Any, edit, fixture, rule } from "./fixtures.ts";

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", annotations: { "sidecar.istio.io/status": "{}", team: "shop" } },
  spec: {
    initContainers: [{ name: "injected-init-container", image: "init:1" }],
    containers: [
      { name: "web", image: "web:1" },
      { name: "istio-proxy", image: "proxyv2:1.22" },
      { name: "log", image: "log:1" },
    ],
  },
};
const webhook = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "cert-manager-webhook" },
  webhooks: [
    { name: "a.example.com", clientConfig: { caBundle: "LS0t", service: { name: "a" } } },
    { name: "b.example.com", clientConfig: { service: { name: "b" } } },
  ],
};

const table: Array<{
  name: string;
  expression: string;
  input: unknown;
  paths: Array<Array<string | number>>;
}> = [
  {
    name: "Argo CD: an init container by name",
    expression: '.spec.template.spec.initContainers[] | select(.name == "injected-init-container")',
    input: { spec: { template: pod } },
    paths: [["spec", "template", "spec", "initContainers", 0]],
  },
  {
    name: "Argo CD: every webhook's caBundle, where there is one",
    expression: ".webhooks[]?.clientConfig.caBundle",
    input: webhook,
    paths: [["webhooks", 0, "clientConfig", "caBundle"]],
  },
  {
    name: "Argo CD: []? on an object without the list selects nothing",
    expression: ".webhooks[]?.clientConfig.caBundle",
    input: pod,
    paths: [],
  },
  {
    name: "recursive descent: `and` short-circuits on strings (jq and gojq find the container)",
    expression: '.. | select(type == "object" and .name == "istio-proxy")',
    input: pod,
    paths: [["spec", "containers", 1]],
  },
  {
    name: "annotations chosen by key, when there are annotations",
    expression:
      '.metadata.annotations | select(. != null) | .[keys[] | select(startswith("sidecar.istio.io/"))]',
    input: pod,
    paths: [["metadata", "annotations", "sidecar.istio.io/status"]],
  },
  {
    name: "annotations: select(. != null) on an object without them selects nothing",
    expression: '.metadata.labels | select(. != null) | .[keys[] | select(startswith("x"))]',
    input: pod,
    paths: [],
  },
  {
    name: "a slice covers the list positions it spans",
    expression: ".spec.containers[1:]",
    input: pod,
    paths: [
      ["spec", "containers", 1],
      ["spec", "containers", 2],
    ],
  },
  {
    name: "a negative index and a negative slice",
    expression: ".spec.containers[-1], .spec.containers[:-2][].image",
    input: pod,
    paths: [
      ["spec", "containers", 2],
      ["spec", "containers", 0, "image"],
    ],
  },
  {
    name: "alternatives: the first that exists",
    expression: ".spec.replicas // .spec.containers[0].image",
    input: pod,
    paths: [["spec", "containers", 0, "image"]],
  },
  {
    name: "a location the object lacks selects nothing",
    expression: ".spec.replicas",
    input: pod,
    paths: [],
  },
  {
    name: "a runtime error selects nothing, as Argo CD skips the rule",
    expression: ".spec.volumes[].name",
    input: pod,
    paths: [],
  },
];

describe("jqPathExpressions (jq semantics)", () => {
  for (const c of table) {
    it(c.name, () => assert.deepEqual(jqPaths(c.expression, c.input), c.paths));
  }

  it("hundreds of evaluations on distinct objects all answer (no state leaks from one run to the next)", () => {
    for (let i = 0; i < 400; i++) {
      const input = { spec: { containers: [{ name: `c${i}` }, { name: "istio-proxy" }] } };
      assert.deepEqual(jqPaths('.spec.containers[] | select(.name == "istio-proxy")', input), [
        ["spec", "containers", 1],
      ]);
    }
  });

  it("the istio-proxy rule imported from Argo CD ignores the injected sidecar", () => {
    const withProxy = (image: string) => (o: Any) => {
      o.spec.template.spec.containers.push({ name: "istio-proxy", image });
    };
    const desired = edit(fixture("deployment.desired.yaml"), withProxy("docker.io/istio/proxyv2:1.21.0"));
    const live = edit(fixture("deployment.live.yaml"), withProxy("docker.io/istio/proxyv2:1.22.0"));
    const expression = 'path(.. | select(type == "object" and .name == "istio-proxy")) as $p | getpath($p)';
    const bare = compareObjects(desired, live, { ignoreDifferences: [] });
    assert.equal(bare.inSync, false);
    const rules = [
      rule({
        group: "apps",
        kind: "Deployment",
        jqPathExpressions: ['.. | select(type == "object" and .name == "istio-proxy")'],
      }),
    ];
    assert.equal(compareObjects(desired, live, { ignoreDifferences: rules }).inSync, true);
    // A path expression that goes through getpath() is still a path expression in jq.
    const viaGetpath = [rule({ group: "apps", kind: "Deployment", jqPathExpressions: [expression] })];
    assert.equal(compareObjects(desired, live, { ignoreDifferences: viaGetpath }).inSync, true);
  });

  it("Argo CD's webhook rule keeps the comparison in sync when the caBundle is injected", () => {
    // The CA injector rewrote the bundle the chart shipped.
    const desired = edit(webhook as Any, (o: Any) => (o.webhooks[0].clientConfig.caBundle = "b2xk"));
    const rules = [
      rule({
        group: "admissionregistration.k8s.io",
        kind: "MutatingWebhookConfiguration",
        jqPathExpressions: [".webhooks[]?.clientConfig.caBundle"],
      }),
    ];
    assert.equal(
      compareObjects(desired as KubeObject, webhook as KubeObject, { ignoreDifferences: [] }).inSync,
      false,
    );
    assert.equal(
      compareObjects(desired as KubeObject, webhook as KubeObject, { ignoreDifferences: rules }).inSync,
      true,
    );
  });

  it("with_entries builds a new value, not a path: an error naming the rule, never a silent no-op", () => {
    const rules = [
      rule({ kind: "Pod", name: "web" }),
      rule({
        kind: "Pod",
        jqPathExpressions: [
          '.metadata.annotations | select(. != null) | with_entries(select(.key | startswith("sidecar")))',
        ],
      }),
    ];
    assert.throws(
      () => compareObjects(pod as KubeObject, pod as KubeObject, { ignoreDifferences: rules }),
      (err: unknown) =>
        err instanceof IgnoreRuleError &&
        /^ignoreDifferences\[1\] \(group "", kind Pod\): jqPathExpressions ".*" is not a path expression/.test(
          err.message,
        ),
    );
  });
});
