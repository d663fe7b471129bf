// The Helm chart deploy/chart/syncward beside the kustomize deploy/: `helm lint` passes and
// `helm template` renders, for the defaults and each option, the objects `kubectl kustomize` renders
// for deploy/ with the matching components (same RBAC, same Deployment, same alerts), less the
// Namespace (Helm installs into one) and plus Helm's own labels. Offline: no cluster.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { ensureHelm } from "../../support/helm.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const DEPLOY = join(ROOT, "deploy");
const CHART = join(DEPLOY, "chart", "syncward");
const helm = ensureHelm();

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [k: string]: unknown;
}

function parse(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const HELM_LABELS = [
  "app.kubernetes.io/instance",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/version",
  "helm.sh/chart",
];

function chart(set: string[], command = "template"): string {
  const args =
    command === "template" ? ["template", "syncward", CHART, "-n", "syncward"] : ["lint", CHART, "--strict"];
  for (const s of set) args.push("--set", s);
  // stderr: helm notes each file linked into files/ from deploy/.
  return execFileSync(helm, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();
}

const work = mkdtempSync(join(tmpdir(), "syncward-chart-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** deploy/ with `components`, in an overlay as an operator writes it. */
function kustomize(components: string[]): Obj[] {
  const dir = mkdtempSync(join(work, "overlay-"));
  const rel = relative(dir, DEPLOY);
  const list = components.map((c) => `  - ${rel}/components/${c}\n`).join("");
  writeFileSync(
    join(dir, "kustomization.yaml"),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [${rel}]\n${list ? `components:\n${list}` : ""}`,
  );
  return parse(execFileSync("kubectl", ["kustomize", dir], { stdio: ["ignore", "pipe", "pipe"] }).toString());
}

const key = (o: Obj) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** Objects by key, without labels (compared apart: the chart's carry deploy/'s and Helm's). */
function byKey(objects: Obj[]): Map<string, Obj> {
  return new Map(
    objects.map((o) => {
      const { labels: _labels, ...metadata } = o.metadata;
      return [key(o), { ...o, metadata }];
    }),
  );
}

const OPTIONS: Array<{ name: string; set: string[]; components: string[] }> = [
  { name: "defaults", set: [], components: [] },
  { name: "impersonation", set: ["impersonation.enabled=true"], components: ["impersonation"] },
  { name: "narrow Secrets", set: ["narrowSecrets.enabled=true"], components: ["narrow-secrets"] },
  { name: "cluster resources", set: ["clusterResources.enabled=true"], components: ["cluster-resources"] },
  { name: "previews", set: ["previews.enabled=true"], components: ["previews"] },
  { name: "NetworkPolicy", set: ["networkPolicy.enabled=true"], components: ["network-policy"] },
  { name: "monitoring", set: ["monitoring.enabled=true"], components: ["monitoring"] },
  {
    name: "impersonation and narrow Secrets",
    set: ["impersonation.enabled=true", "narrowSecrets.enabled=true"],
    components: ["narrow-secrets", "impersonation"],
  },
  {
    name: "every option",
    set: [
      "impersonation.enabled=true",
      "narrowSecrets.enabled=true",
      "clusterResources.enabled=true",
      "previews.enabled=true",
      "networkPolicy.enabled=true",
      "monitoring.enabled=true",
    ],
    components: [
      "impersonation",
      "narrow-secrets",
      "cluster-resources",
      "previews",
      "network-policy",
      "monitoring",
    ],
  },
];

describe("the Helm chart", () => {
  for (const option of OPTIONS) {
    it(`${option.name}: lints and renders what kustomize renders with ${option.components.join(", ") || "no component"}`, () => {
      assert.match(chart(option.set, "lint"), /1 chart\(s\) linted, 0 chart\(s\) failed/);
      const fromHelm = parse(chart(option.set));
      const fromKustomize = kustomize(option.components).filter((o) => o.kind !== "Namespace");
      assert.deepEqual(fromHelm.map(key).sort(), fromKustomize.map(key).sort(), "the same objects");
      for (const o of fromHelm) {
        const expected = fromKustomize.find((k) => key(k) === key(o));
        for (const [label, value] of Object.entries({
          ...expected?.metadata.labels,
          "app.kubernetes.io/name": "syncward",
        }))
          assert.equal(o.metadata.labels?.[label], value, `${key(o)}: label ${label}`);
        assert.deepEqual(
          Object.keys(o.metadata.labels ?? {})
            .filter((l) => HELM_LABELS.includes(l))
            .sort(),
          [...HELM_LABELS].sort(),
        );
      }
      const want = byKey(fromKustomize);
      for (const [k, o] of byKey(fromHelm)) assert.deepEqual(o, want.get(k), k);
    });
  }

  it("sets replicas, image, resources and the Prometheus selector labels from values", () => {
    const objects = parse(
      chart([
        "replicas=1",
        "image.digest=sha256:abc",
        "resources.limits.memory=2Gi",
        "monitoring.enabled=true",
        "monitoring.labels.release=kube-prometheus-stack",
        "github.enterpriseHost=github.example.com",
      ]),
    );
    const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
      spec: {
        replicas: number;
        template: {
          spec: {
            containers: Array<{
              image: string;
              resources: object;
              env: Array<{ name: string; value?: string }>;
            }>;
          };
        };
      };
    };
    assert.equal(deployment.spec.replicas, 1);
    const container = deployment.spec.template.spec.containers[0]!;
    assert.equal(container.image, "ghcr.io/your-org/syncward@sha256:abc");
    assert.deepEqual(container.resources, {
      requests: { cpu: "100m", memory: "256Mi" },
      limits: { cpu: "1", memory: "2Gi" },
    });
    assert.deepEqual(
      container.env.find((e) => e.name === "GHE_HOST"),
      { name: "GHE_HOST", value: "github.example.com" },
    );
    for (const kind of ["PodMonitor", "PrometheusRule"])
      assert.equal(
        objects.find((o) => o.kind === kind)?.metadata.labels?.release,
        "kube-prometheus-stack",
        kind,
      );
  });

  it("refuses values of the wrong shape before rendering anything", () => {
    const table: Array<[string, RegExp]> = [
      ["impersonation=true", /at '\/impersonation': got boolean, want object/],
      ["replicas=three", /at '\/replicas': got string, want integer/],
      ["networkPolicy.enable=true", /networkPolicy.*enable/s],
      ["logLevel=verbose", /at '\/logLevel'/],
    ];
    for (const [set, message] of table)
      assert.throws(
        () => chart([set]),
        (err: Error & { stderr?: Buffer }) => message.test(String(err.stderr)),
        set,
      );
  });

  it("seeds the operator's projects in a ConfigMap that uninstalls and upgrades keep, and none by default", () => {
    assert.equal(parse(chart([])).filter((o) => o.metadata.name === "syncward-projects").length, 0);
    const doc =
      "projects:\n  - name: shop\n    repositories: [acme/shop]\n    destinations: [{namespace: shop}]\n";
    const objects = parse(chart([`projects=${doc.replace(/,/g, "\\,")}`]));
    const projects = objects.find((o) => o.metadata.name === "syncward-projects") as Obj & {
      data: Record<string, string>;
    };
    assert.ok(projects, "syncward-projects rendered");
    assert.equal(projects.metadata.annotations?.["helm.sh/resource-policy"], "keep");
    assert.equal(projects.data["projects.yaml"], doc);
    // The shipped default is rendered beside it, as deploy/ ships it.
    assert.ok(objects.some((o) => o.metadata.name === "syncward-projects-default"));
  });
});
