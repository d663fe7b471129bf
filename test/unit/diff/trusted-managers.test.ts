// Trust by field, not by name: which (manager, path) changes are trusted, which fields no name is
// trusted for, and the spoofing finding when a trusted name claims what its pairs do not cover.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareObjects } from "../../../src/engine/diff/index.ts";
import { parsePointer } from "../../../src/engine/diff/json-pointer.ts";
import { isSecurityField, mayHoldSecurityField } from "../../../src/engine/diff/security-fields.ts";
import {
  isTrustedFor,
  spoofingOf,
  type TrustedManager,
  trustList,
} from "../../../src/engine/diff/trusted-managers.ts";
import { revertTrail } from "../../../src/engine/revert/index.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const path = (pointer: string) => parsePointer(pointer).map((t) => (/^\d+$/.test(t) ? Number(t) : t));

describe("isSecurityField", () => {
  const cases: Array<[string, string, boolean]> = [
    ["Deployment", "/spec/template/spec/containers/1", true],
    ["Deployment", "/spec/template/spec/containers/0/image", true],
    ["Deployment", "/spec/template/spec/containers/0/command", true],
    ["Deployment", "/spec/template/spec/containers/0/args", true],
    ["Deployment", "/spec/template/spec/containers/0/env/0/value", true],
    ["Deployment", "/spec/template/spec/containers/0/envFrom", true],
    ["Deployment", "/spec/template/spec/containers/0/volumeMounts/0", true],
    ["Deployment", "/spec/template/spec/containers/0/securityContext/capabilities/add", true],
    ["Deployment", "/spec/template/spec/containers/0/ports/0/hostPort", true],
    ["Deployment", "/spec/template/spec/containers/0/livenessProbe/exec", true],
    ["Deployment", "/spec/template/spec/initContainers/0", true],
    ["Pod", "/spec/ephemeralContainers", true],
    ["Deployment", "/spec/template/spec/hostPID", true],
    ["Deployment", "/spec/template/spec/hostNetwork", true],
    ["Deployment", "/spec/template/spec/volumes/0/hostPath", true],
    ["Deployment", "/spec/template/spec/securityContext/runAsUser", true],
    ["Deployment", "/spec/template/spec/serviceAccountName", true],
    ["CronJob", "/spec/jobTemplate/spec/template/spec/automountServiceAccountToken", true],
    ["ServiceAccount", "/automountServiceAccountToken", true],
    ["Role", "/rules/0/verbs", true],
    ["ClusterRoleBinding", "/subjects/0", true],
    ["ClusterRoleBinding", "/roleRef", true],
    ["MutatingWebhookConfiguration", "/webhooks/0/clientConfig/caBundle", true],
    ["CustomResourceDefinition", "/spec/conversion/webhook/clientConfig/service/name", true],
    ["CustomResourceDefinition", "/spec/conversion/strategy", true],
    // A CRD's schema names properties after what its resources hold; it runs nothing itself.
    [
      "CustomResourceDefinition",
      "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/containers/items",
      false,
    ],
    [
      "CustomResourceDefinition",
      "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/volumes",
      false,
    ],
    // What autoscalers and controllers legitimately change.
    ["Deployment", "/spec/replicas", false],
    ["Deployment", "/spec/template/spec/containers/0/resources/limits/cpu", false],
    ["Deployment", "/metadata/annotations/x", false],
    ["Deployment", "/spec/template/metadata/annotations/x", false],
    ["Deployment", "/spec/template/spec/tolerations/0", false],
    ["Role", "/metadata/labels/x", false],
    ["ConfigMap", "/data/volumes", false],
  ];
  for (const [kind, pointer, expected] of cases)
    it(`${kind} ${pointer}: ${expected ? "security-relevant" : "not"}`, () =>
      assert.equal(isSecurityField(path(pointer), kind), expected));

  // A walk that skips what mayHoldSecurityField refuses must still meet every security field.
  it("mayHoldSecurityField admits every prefix of every security-relevant path", () => {
    for (const [kind, pointer, expected] of cases) {
      if (!expected) continue;
      const full = path(pointer);
      for (let n = 0; n <= full.length; n++)
        assert.ok(mayHoldSecurityField(full.slice(0, n), kind), `${kind} ${pointer} at ${n} tokens`);
    }
  });
});

describe("mayHoldSecurityField: the subtrees a search for security fields may skip", () => {
  const cases: Array<[string, string, boolean]> = [
    ["CustomResourceDefinition", "/spec/versions", false],
    ["CustomResourceDefinition", "/spec/versions/0/schema/openAPIV3Schema/properties/spec", false],
    ["CustomResourceDefinition", "/spec/names", false],
    ["CustomResourceDefinition", "/spec", true],
    ["CustomResourceDefinition", "/spec/conversion", true],
    ["CustomResourceDefinition", "", true],
    ["Role", "/metadata", false],
    ["ClusterRoleBinding", "/metadata/labels", false],
    ["Deployment", "/status", false],
    ["ServiceAccount", "/metadata", false],
    // Fail closed: a kind it knows nothing particular of keeps every subtree but status and metadata.
    ["Deployment", "/spec/template/metadata", true],
    ["Widget", "/spec/anything", true],
  ];
  for (const [kind, pointer, expected] of cases)
    it(`${kind} ${pointer || "(root)"}: ${expected ? "walked" : "skipped"}`, () =>
      assert.equal(mayHoldSecurityField(path(pointer), kind), expected));
});

describe("isTrustedFor: a pair, never a name alone", () => {
  const hpa: TrustedManager = { manager: "my-autoscaler", paths: ["/spec/replicas"] };
  const trust = trustList([
    hpa,
    "keda-*",
    { manager: "vpa", paths: ["/spec/template/spec/containers/*/resources"] },
  ]);
  const cases: Array<[string, string, boolean]> = [
    ["kube-controller-manager", "/spec/replicas", true],
    ["kube-controller-manager", "/metadata/annotations/deployment.kubernetes.io~1revision", true],
    ["kube-controller-manager", "/spec/template/spec/containers/1", false],
    ["kube-controller-manager", "/spec/template/spec/hostPID", false],
    ["kube-controller-manager", "/metadata/labels/team", false],
    ["kubectl-rollout", "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt", true],
    ["my-autoscaler", "/spec/replicas", true],
    ["my-autoscaler", "/spec/template/spec/volumes/0", false],
    ["my-autoscaler", "/metadata/annotations/x", false],
    // A bare name: replicas, labels and annotations.
    ["keda-operator", "/spec/replicas", true],
    ["keda-operator", "/metadata/annotations/x", true],
    ["keda-operator", "/spec/template/spec/containers/0/image", false],
    ["vpa", "/spec/template/spec/containers/0/resources/requests/cpu", true],
    ["vpa", "/spec/template/spec/containers/0/image", false],
    // syncward's own name: everything but security-relevant fields (those are compared with the render).
    ["syncward", "/spec/template/spec/tolerations/1", true],
    ["syncward", "/spec/template/spec/containers/1", false],
    ["kubectl-edit", "/spec/replicas", false],
  ];
  for (const [manager, pointer, expected] of cases)
    it(`${manager} at ${pointer}: ${expected ? "trusted" : "drift"}`, () =>
      assert.equal(isTrustedFor(manager, path(pointer), "Deployment", trust), expected));

  it("says which trusted name was claimed and what it is trusted for", () => {
    const at = "/spec/template/spec/hostPID";
    assert.match(
      spoofingOf("my-autoscaler", at, path(at), "Deployment", trust) ?? "",
      /claims the trusted manager name my-autoscaler \(trusted only for \/spec\/replicas\), but \/spec\/template\/spec\/hostPID is a security-relevant field/,
    );
    assert.equal(
      spoofingOf("kubectl-edit", at, path(at), "Deployment", trust),
      undefined,
      "an ordinary intruder",
    );
    assert.equal(
      spoofingOf("my-autoscaler", "/spec/replicas", path("/spec/replicas"), "Deployment", trust),
      undefined,
    );
  });
});

const web = (extra: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx:1.27" }], ...extra },
      },
    },
  }) as KubeObject;

/** live: the Deployment with a sidecar, hostPID and a hostPath volume written under `manager`. */
function spoofed(manager: string, operation = "Update"): KubeObject {
  const live = web({
    hostPID: true,
    volumes: [{ name: "host", hostPath: { path: "/" } }],
  }) as KubeObject & { spec: { template: { spec: { containers: unknown[] } } } };
  live.spec.template.spec.containers.push({
    name: "evil",
    image: "evil:1",
    securityContext: { privileged: true },
  });
  live.metadata.managedFields = [
    {
      manager: "syncward",
      operation: "Apply",
      fieldsV1: {
        "f:spec": {
          "f:selector": {},
          "f:template": {
            "f:metadata": { "f:labels": { "f:app": {} } },
            "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:name": {}, "f:image": {} } } },
          },
        },
      },
    },
    {
      manager,
      operation,
      fieldsV1: {
        "f:spec": {
          "f:template": {
            "f:spec": {
              "f:hostPID": {},
              "f:volumes": {
                ".": {},
                'k:{"name":"host"}': { ".": {}, "f:name": {}, "f:hostPath": { "f:path": {} } },
              },
              "f:containers": {
                'k:{"name":"evil"}': {
                  ".": {},
                  "f:name": {},
                  "f:image": {},
                  "f:securityContext": { "f:privileged": {} },
                },
              },
            },
          },
        },
      },
    },
  ];
  return live;
}

describe("spoofed managers: a sidecar, hostPID and a hostPath volume", () => {
  const options = { trustedManagers: [{ manager: "my-autoscaler", paths: ["/spec/replicas"] }] };
  for (const manager of ["kube-controller-manager", "syncward", "my-autoscaler"]) {
    it(`under ${manager}: drift, and the trail flags every change as spoofing`, () => {
      const live = spoofed(manager);
      const differences = compareObjects(web(), live, options).differences;
      assert.deepEqual(differences.map((d) => `${d.kind} ${d.path}`).sort(), [
        "added /spec/template/spec/hostPID",
        "added /spec/template/spec/volumes",
        "extra /spec/template/spec/containers/1",
      ]);
      const trail = revertTrail("apps/Deployment:shop/web", web(), live, options);
      for (const r of trail) {
        assert.equal(r.manager, manager, JSON.stringify(r));
        assert.match(
          r.spoofing ?? "",
          new RegExp(manager === "syncward" ? "syncward's own name" : `name ${manager}`),
        );
        assert.ok(r.security, `${r.path} is security-relevant`);
      }
    });
  }

  it("an ordinary intruder is reverted but not called a spoofer", () => {
    const trail = revertTrail("k", web(), spoofed("kubectl-patch"), options);
    assert.equal(trail.length, 3);
    assert.ok(trail.every((r) => r.spoofing === undefined && !r.trusted));
  });

  it("an image changed under syncward's name in the deployed render is flagged (values are compared, not owners)", () => {
    const live = web() as KubeObject & {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    (live.spec.template.spec.containers[0] as { image: string }).image = "evil:1";
    live.metadata.managedFields = [
      {
        manager: "syncward",
        operation: "Update",
        fieldsV1: {
          "f:spec": {
            "f:template": { "f:spec": { "f:containers": { 'k:{"name":"web"}': { "f:image": {} } } } },
          },
        },
      },
    ];
    const [r] = revertTrail("k", web(), live, options);
    assert.equal(r?.path, "/spec/template/spec/containers/0/image");
    assert.match(r?.spoofing ?? "", /syncward's own name/);
  });
});
