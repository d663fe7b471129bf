// What untrusted field managers added, read from managedFields of an object a real API server
// returned after a kubectl attack (test/fixtures/diff/deployment.live-attacked.yaml).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareObjects } from "../../../src/engine/diff/index.ts";
import type { CompareOptions } from "../../../src/engine/diff/types.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { type Any, edit, fixture, rule } from "./fixtures.ts";

const attacked = fixture("deployment.live-attacked.yaml");
const git = fixture("deployment.desired-web.yaml");

const ALL_BUT_VOLUMES = [
  "changed /spec/replicas kubectl",
  "extra /spec/template/spec/containers/0 kubectl-patch+kubectl-set",
  "added /spec/template/spec/containers/1/env kubectl-set",
  "added /spec/template/spec/containers/1/securityContext kubectl-patch",
  "added /spec/template/spec/serviceAccountName kubectl-patch",
];

/** `path manager` per difference, the way a responder reads them. */
function drift(desired: KubeObject, live: KubeObject, options?: CompareOptions): string[] {
  return compareObjects(desired, live, options).differences.map(
    (d) => `${d.kind} ${d.path}${d.owners ? ` ${d.owners.map((o) => o.manager).join("+")}` : ""}`,
  );
}

describe("additions by untrusted field managers", () => {
  const cases: Array<{
    name: string;
    desired?: KubeObject;
    live?: KubeObject;
    options?: CompareOptions;
    expected: string[];
  }> = [
    {
      name: "every kubectl change: scale, an added container, privileged, env, ServiceAccount, hostPath volume",
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes kubectl-patch"],
    },
    {
      name: "Git declaring an env list: only the added item is drift",
      desired: edit(git, (o: Any) => {
        o.spec.template.spec.containers[0].env = [];
      }),
      expected: [
        "changed /spec/replicas kubectl",
        "extra /spec/template/spec/containers/1/env/0 kubectl-set",
        "extra /spec/template/spec/containers/0 kubectl-patch+kubectl-set",
        "added /spec/template/spec/containers/1/securityContext kubectl-patch",
        "added /spec/template/spec/serviceAccountName kubectl-patch",
        "added /spec/template/spec/volumes kubectl-patch",
      ],
    },
    {
      name: "a trusted name is trusted for its paths only: containers, privileged, env, ServiceAccount and volumes stay drift",
      options: { trustedManagers: ["kubectl-*"] },
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes kubectl-patch"],
    },
    {
      name: "a (manager, paths) pair covering the pod spec still leaves its security-relevant fields drift",
      options: { trustedManagers: [{ manager: "kubectl-patch", paths: ["/spec/template/spec"] }] },
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes kubectl-patch"],
    },
    {
      name: "managedFieldsManagers ignores that manager's fields, but never security-relevant ones",
      options: {
        ignoreDifferences: [
          rule({
            group: "apps",
            kind: "Deployment",
            managedFieldsManagers: ["kubectl-patch", "kubectl-set"],
          }),
        ],
      },
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes kubectl-patch"],
    },
    {
      name: "a security-relevant field under syncward's own name that the render lacks is drift (the name proves nothing)",
      live: edit(attacked, (o: Any) => {
        o.metadata.managedFields[0].fieldsV1["f:spec"]["f:template"]["f:spec"]["f:volumes"] = {
          ".": {},
          'k:{"name":"h"}': { ".": {}, "f:name": {}, "f:hostPath": { "f:path": {}, "f:type": {} } },
        };
      }),
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes syncward"],
    },
    {
      name: "a harmless field syncward co-owns is not drift (admission added it to syncward's own request)",
      live: edit(attacked, (o: Any) => {
        o.spec.template.spec.tolerations = [{ key: "dedicated", operator: "Exists" }];
        o.metadata.managedFields[0].fieldsV1["f:spec"]["f:template"]["f:spec"]["f:tolerations"] = {};
      }),
      expected: [...ALL_BUT_VOLUMES, "added /spec/template/spec/volumes kubectl-patch"],
    },
    {
      name: "host namespaces, nodeSelector, tolerations and automountServiceAccountToken added by hand",
      live: edit(fixture("deployment.live-attacked.yaml"), (o: Any) => {
        o.metadata.managedFields = o.metadata.managedFields.slice(0, 1);
        o.spec.replicas = 2;
        o.spec.template.spec.containers.splice(0, 1);
        const web = o.spec.template.spec.containers[0];
        delete web.env;
        delete web.securityContext;
        for (const k of ["serviceAccount", "serviceAccountName", "volumes"]) delete o.spec.template.spec[k];
        Object.assign(o.spec.template.spec, {
          hostNetwork: true,
          hostPID: true,
          nodeSelector: { "kubernetes.io/hostname": "node-1" },
          tolerations: [{ operator: "Exists" }],
          automountServiceAccountToken: true,
        });
        o.metadata.managedFields.push({
          manager: "kubectl-edit",
          operation: "Update",
          fieldsV1: {
            "f:spec": {
              "f:template": {
                "f:spec": {
                  "f:hostNetwork": {},
                  "f:hostPID": {},
                  "f:nodeSelector": {},
                  "f:tolerations": {},
                  "f:automountServiceAccountToken": {},
                },
              },
            },
          },
        });
      }),
      expected: [
        "added /spec/template/spec/automountServiceAccountToken kubectl-edit",
        "added /spec/template/spec/hostNetwork kubectl-edit",
        "added /spec/template/spec/hostPID kubectl-edit",
        "added /spec/template/spec/nodeSelector kubectl-edit",
        "added /spec/template/spec/tolerations kubectl-edit",
      ],
    },
    {
      name: "kubectl rollout restart's restartedAt annotation is never drift",
      live: edit(fixture("deployment.live-attacked.yaml"), (o: Any) => {
        o.metadata.managedFields = o.metadata.managedFields.slice(0, 1);
        o.spec.replicas = 2;
        o.spec.template.spec.containers.splice(0, 1);
        o.spec.template.metadata.annotations = {
          "kubectl.kubernetes.io/restartedAt": "2026-12-01T10:00:00Z",
        };
        o.metadata.managedFields.push({
          manager: "kubectl-rollout",
          operation: "Update",
          fieldsV1: {
            "f:spec": {
              "f:template": {
                "f:metadata": { "f:annotations": { ".": {}, "f:kubectl.kubernetes.io/restartedAt": {} } },
              },
            },
          },
        });
        delete o.spec.template.spec.containers[0].env;
        delete o.spec.template.spec.containers[0].securityContext;
        delete o.spec.template.spec.serviceAccountName;
        delete o.spec.template.spec.serviceAccount;
        delete o.spec.template.spec.volumes;
      }),
      expected: [],
    },
    {
      name: "an annotation added where Git declares others is one addition",
      desired: edit(git, (o: Any) => {
        o.metadata.annotations = { team: "payments" };
      }),
      live: edit(attacked, (o: Any) => {
        o.metadata.annotations.team = "payments";
        o.metadata.annotations["evil.example/exfil"] = "1";
        o.metadata.managedFields[0].fieldsV1["f:metadata"]["f:annotations"] = { "f:team": {} };
        o.metadata.managedFields.push({
          manager: "kubectl-annotate",
          operation: "Update",
          time: "2026-12-01T09:30:00Z",
          fieldsV1: { "f:metadata": { "f:annotations": { "f:evil.example/exfil": {} } } },
        });
      }),
      options: { trustedManagers: ["kubectl", "kubectl-patch", "kubectl-set"] },
      expected: [
        "changed /spec/replicas kubectl",
        "extra /spec/template/spec/containers/0 kubectl-patch+kubectl-set",
        "added /metadata/annotations/evil.example~1exfil kubectl-annotate",
        ...ALL_BUT_VOLUMES.slice(2),
        "added /spec/template/spec/volumes kubectl-patch",
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(drift(c.desired ?? git, c.live ?? attacked, c.options), c.expected));
  }

  it("records the operation and time of the change", () => {
    const added = compareObjects(git, attacked).differences.find((d) => d.path.endsWith("/securityContext"));
    assert.deepEqual(added?.owners, [
      { manager: "kubectl-patch", operation: "Update", time: "2026-12-01T09:20:36Z", trusted: false },
    ]);
    assert.deepEqual(added?.live, { privileged: true });
  });

  it("a Secret key added by hand is drift, and its value is masked", () => {
    const secret: Any = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "db",
        namespace: "shop",
        managedFields: [
          { manager: "syncward", operation: "Apply", fieldsV1: { "f:data": { "f:password": {} } } },
          { manager: "kubectl-patch", operation: "Update", fieldsV1: { "f:data": { "f:stolen": {} } } },
        ],
      },
      data: { password: "cGFzcw==", stolen: "c2VjcmV0" },
    };
    const differences = compareObjects(
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db", namespace: "shop" },
        data: { password: "cGFzcw==" },
      },
      secret,
    ).differences;
    assert.deepEqual(
      differences.map((d) => [d.kind, d.path, d.live]),
      [["added", "/data/stolen", "********"]],
    );
    assert.doesNotMatch(JSON.stringify(differences), /c2VjcmV0/);
  });

  it("null in Git declares nothing: a Secret with `data: {key: null}` is in sync", () => {
    const desired: Any = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "shop" },
      data: { a: "YQ==", b: null },
    };
    const live: Any = {
      ...desired,
      metadata: {
        ...desired.metadata,
        managedFields: [
          { manager: "syncward", operation: "Apply", fieldsV1: { "f:data": { "f:a": {}, "f:b": {} } } },
        ],
      },
      data: { a: "YQ==", b: "" },
      type: "Opaque",
    };
    assert.deepEqual(compareObjects(desired, live).differences, []);
  });
});
