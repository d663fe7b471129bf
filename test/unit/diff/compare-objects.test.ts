import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareObjects } from "../../../src/engine/diff/index.ts";
import type { CompareOptions, Difference } from "../../../src/engine/diff/types.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { type Any, edit, fixture } from "./fixtures.ts";

const desired = fixture("deployment.desired.yaml");
const live = fixture("deployment.live.yaml");

interface Case {
  name: string;
  desired?: KubeObject;
  live: KubeObject;
  options?: CompareOptions;
  differences: Difference[];
}

const cases: Case[] = [
  {
    name: "in sync despite server defaults, canonical quantities, status and managedFields",
    live,
    differences: [],
  },
  {
    name: "replicas changed (HPA scaled to 5)",
    live: fixture("deployment.live-scaled.yaml"),
    differences: [
      {
        path: "/spec/replicas",
        kind: "changed",
        desired: 3,
        live: 5,
        owners: [
          {
            manager: "kube-controller-manager",
            operation: "Update",
            time: "2025-06-02T10:02:44Z",
            subresource: "scale",
            trusted: true,
          },
        ],
      },
    ],
  },
  {
    name: "image swapped",
    live: edit(live, (o: Any) => {
      o.spec.template.spec.containers[0].image = "ghcr.io/acme/web:1.4.3-hotfix";
    }),
    differences: [
      {
        path: "/spec/template/spec/containers/0/image",
        kind: "changed",
        desired: "ghcr.io/acme/web:1.4.2",
        live: "ghcr.io/acme/web:1.4.3-hotfix",
      },
    ],
  },
  {
    name: "sidecar added by kubectl edit is an extra list item",
    live: fixture("deployment.live-edited.yaml"),
    differences: [
      {
        path: "/spec/template/spec/containers/1",
        kind: "extra",
        live: {
          image: "fluent/fluent-bit:3.0",
          imagePullPolicy: "IfNotPresent",
          name: "log-shipper",
          resources: {},
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
        },
        owners: [
          { manager: "kubectl-edit", operation: "Update", time: "2025-06-02T11:30:12Z", trusted: false },
        ],
      },
    ],
  },
  {
    name: "label removed from live",
    live: edit(live, (o: Any) => {
      delete o.metadata.labels["app.kubernetes.io/part-of"];
    }),
    differences: [{ path: "/metadata/labels/app.kubernetes.io~1part-of", kind: "missing", desired: "shop" }],
  },
  {
    name: "extra env var in live (no managedFields: nobody to ask, so any extra item is drift)",
    live: edit(live, (o: Any) => {
      delete o.metadata.managedFields;
      o.spec.template.spec.containers[0].env.push({ name: "DEBUG", value: "1" });
    }),
    differences: [
      { path: "/spec/template/spec/containers/0/env/2", kind: "extra", live: { name: "DEBUG", value: "1" } },
    ],
  },
  {
    name: "env var missing in live is addressed by its position in desired",
    live: edit(live, (o: Any) => {
      o.spec.template.spec.containers[0].env.splice(0, 1);
    }),
    differences: [
      {
        path: "/spec/template/spec/containers/0/env/0",
        kind: "missing",
        desired: { name: "LOG_LEVEL", value: "info" },
      },
    ],
  },
  {
    name: "named lists are matched by name, not position",
    live: edit(live, (o: Any) => {
      o.spec.template.spec.containers[0].env.reverse();
    }),
    differences: [],
  },
  {
    name: "unnamed lists are matched by position",
    desired: edit(desired, (o: Any) => {
      o.spec.template.spec.containers[0].args = ["--port", "8080"];
    }),
    live: edit(live, (o: Any) => {
      delete o.metadata.managedFields;
      o.spec.template.spec.containers[0].args = ["--port", "8080", "--verbose"];
    }),
    differences: [{ path: "/spec/template/spec/containers/0/args/2", kind: "extra", live: "--verbose" }],
  },
  {
    name: "a server-defaulted field desired does not declare is not drift, one it declares is",
    desired: edit(desired, (o: Any) => {
      o.spec.strategy = { type: "Recreate" };
    }),
    live,
    differences: [
      { path: "/spec/strategy/type", kind: "changed", desired: "Recreate", live: "RollingUpdate" },
    ],
  },
  {
    name: 'quantities: 0.25 == 250m, 1 == "1", 0.5Gi == 512Mi',
    live,
    differences: [],
  },
  {
    name: "quantities that really differ",
    live: edit(live, (o: Any) => {
      o.spec.template.spec.containers[0].resources.limits.memory = "1Gi";
    }),
    differences: [
      {
        path: "/spec/template/spec/containers/0/resources/limits/memory",
        kind: "changed",
        desired: "0.5Gi",
        live: "1Gi",
      },
    ],
  },
  {
    name: 'numbers and numeric strings differ outside quantities (targetPort 8080 vs "8080")',
    desired: edit(fixture("service.desired.yaml"), (o: Any) => {
      o.spec.ports[0].targetPort = 8080;
    }),
    live: edit(fixture("service.live.yaml"), (o: Any) => {
      o.spec.ports[0].targetPort = "8080";
    }),
    differences: [{ path: "/spec/ports/0/targetPort", kind: "changed", desired: 8080, live: "8080" }],
  },
  {
    name: "null in desired means absent",
    desired: edit(desired, (o: Any) => {
      o.spec.template.spec.nodeSelector = null;
      o.metadata.annotations = null;
    }),
    live,
    differences: [],
  },
  {
    name: "empty maps and lists in desired match a live object without them",
    desired: edit(desired, (o: Any) => {
      o.spec.template.spec.containers[0].securityContext = {};
      o.spec.template.spec.tolerations = [];
    }),
    live,
    differences: [],
  },
  {
    name: "last-applied, revision and server metadata are normalized away",
    desired: edit(desired, (o: Any) => {
      o.metadata.annotations = { "deployment.kubernetes.io/revision": "7" };
      o.metadata.resourceVersion = "1";
      o.metadata.uid = "x";
      o.status = { replicas: 99 };
    }),
    live,
    differences: [],
  },
  {
    name: "ignoreMetadataKeys drops annotation and label keys (globs allowed)",
    desired: edit(desired, (o: Any) => {
      o.metadata.annotations = { "team.acme.io/owner": "storefront" };
    }),
    live: edit(live, (o: Any) => {
      o.metadata.annotations["team.acme.io/owner"] = "payments";
      delete o.metadata.labels["app.kubernetes.io/part-of"];
    }),
    options: { ignoreMetadataKeys: ["team.acme.io/*", "app.kubernetes.io/part-of"] },
    differences: [],
  },
  {
    name: "a type change is reported once, at the field",
    desired: edit(desired, (o: Any) => {
      o.spec.template.spec.containers[0].readinessProbe.httpGet.port = 8080;
    }),
    live,
    differences: [
      {
        path: "/spec/template/spec/containers/0/readinessProbe/httpGet/port",
        kind: "changed",
        desired: 8080,
        live: "http",
      },
    ],
  },
  {
    name: "a whole missing subtree is one difference",
    desired: edit(desired, (o: Any) => {
      o.spec.template.spec.containers[0].livenessProbe = { tcpSocket: { port: 8080 } };
    }),
    live,
    differences: [
      {
        path: "/spec/template/spec/containers/0/livenessProbe",
        kind: "missing",
        desired: { tcpSocket: { port: 8080 } },
      },
    ],
  },
  {
    name: "Service in sync despite clusterIP, protocol, sessionAffinity",
    desired: fixture("service.desired.yaml"),
    live: fixture("service.live.yaml"),
    differences: [],
  },
  {
    name: "Secret stringData in Git equals data on the server",
    desired: fixture("secret.desired.yaml"),
    live: fixture("secret.live.yaml"),
    differences: [],
  },
  {
    name: "Secret value changed: the difference carries masks, not values",
    desired: fixture("secret.desired.yaml"),
    live: fixture("secret.live-rotated.yaml"),
    differences: [
      {
        path: "/data/password",
        kind: "changed",
        desired: "++++++++",
        live: "++++++++++++",
        owners: [
          {
            manager: "kubectl-client-side-apply",
            operation: "Update",
            time: "2025-06-01T17:40:11Z",
            trusted: false,
          },
        ],
      },
    ],
  },
];

describe("compareObjects", () => {
  for (const c of cases) {
    it(c.name, () => {
      const d = c.desired ?? desired;
      const before = structuredClone([d, c.live]);
      const result = compareObjects(d, c.live, c.options);
      assert.deepEqual(result.differences, c.differences);
      assert.equal(result.inSync, c.differences.length === 0);
      assert.deepEqual([d, c.live], before, "inputs are not mutated");
    });
  }

  it("finds exactly the drifted ones among 1,000 Deployments", () => {
    const lives = Array.from({ length: 1000 }, (_, i) =>
      edit(live, (o: Any) => {
        o.metadata.name = `web-${i}`;
        if (i % 10 === 0) o.spec.replicas = 4;
      }),
    );
    const desireds = lives.map((l) => edit(desired, (o: Any) => (o.metadata.name = l.metadata.name)));
    // Speed is measured by `npm run bench` (diff and plan of 10,000 objects), never asserted here.
    const drifted: number[] = [];
    for (let i = 0; i < lives.length; i++)
      if (!compareObjects(desireds[i] as KubeObject, lives[i] as KubeObject).inSync) drifted.push(i);
    assert.deepEqual(
      drifted,
      Array.from({ length: 100 }, (_, k) => k * 10),
    );
  });
});

describe("gitops-engine's Secret cases: a value that is null in Git is the empty value", () => {
  const secret = (fields: Record<string, unknown>) =>
    ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "wordpress", namespace: "blog" },
      type: "Opaque",
      ...fields,
    }) as KubeObject;
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, boolean]> = [
    // TestNullSecretData: the chart renders an unset password as null, the cluster holds "".
    [
      "null in Git, empty in the cluster",
      { data: { "smtp-password": null, "wordpress-password": "cGFzcw==" } },
      { data: { "smtp-password": "", "wordpress-password": "cGFzcw==" } },
      true,
    ],
    [
      "null in Git, absent in the cluster (a server-side apply of null)",
      { data: { "smtp-password": null } },
      { data: {} },
      true,
    ],
    [
      "null in Git, a value in the cluster: drift",
      { data: { "smtp-password": null } },
      { data: { "smtp-password": "c2VjcmV0" } },
      false,
    ],
    [
      "null in stringData, a value in the cluster: drift",
      { stringData: { "smtp-password": null } },
      { data: { "smtp-password": "c2VjcmV0" } },
      false,
    ],
  ];
  for (const [name, desired, live, inSync] of cases) {
    it(name, () => {
      const result = compareObjects(secret(desired), secret(live));
      assert.equal(result.inSync, inSync);
      if (!inSync) {
        assert.deepEqual(
          result.differences.map((d) => [d.path, d.kind]),
          [["/data/smtp-password", "changed"]],
        );
        assert.ok(!JSON.stringify(result).includes("c2VjcmV0"), "the live value is masked");
      }
    });
  }
});
