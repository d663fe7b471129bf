import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ArgoImportError, importArgoApplication } from "../../../src/config/argo-import.ts";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import type { EnvironmentConfig } from "../../../src/config/types.ts";

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "config", "argo", name), "utf8");

/** The snippet pasted under `environments:` in a real file parses to the returned environment. */
function assertPastes(yaml: string, environment: EnvironmentConfig): void {
  const indented = yaml
    .split("\n")
    .map((line) => (line === "" ? line : `  ${line}`))
    .join("\n");
  const config = parseConfig(`environments:\n${indented}`);
  assert.deepEqual(config.environments, [environment]);
}

const DEFAULT_RETRY = { limit: 5, backoff: { duration: 5_000, factor: 2, maxDuration: 180_000 } };

const DEFAULT_COMMANDS = {
  sync: "write",
  freeze: "write",
  unfreeze: "write",
  approve: "write",
  diff: "read",
  history: "read",
  rollback: "write",
} as const;

describe("importArgoApplication", () => {
  it("imports the guestbook example (simple.yaml)", () => {
    const { yaml, environment, notes } = importArgoApplication(fixture("simple.yaml"));
    assert.equal(environment.name, "guestbook");
    assert.deepEqual(environment.source, { path: "guestbook", branch: "main" });
    assert.deepEqual(environment.destination, { namespace: "guestbook", inCluster: true });
    assert.equal(environment.syncPolicy.automated, undefined, "no automated in Argo CD: manual");
    assert.deepEqual(environment.syncPolicy.retry, DEFAULT_RETRY);
    assert.deepEqual(environment.policy.namespaces, ["guestbook"]);
    assert.ok(notes.some((n) => n.includes("targetRevision HEAD") && n.includes('"main"')));
    assert.ok(yaml.startsWith('# Imported from Argo CD Application "guestbook"'));
    for (const note of notes) assert.ok(yaml.includes(`# NOTE: ${note}`));
    assertPastes(yaml, environment);
  });

  it("imports automated sync, options, retry with Argo CD durations, ignoreDifferences (automated-retry.yaml)", () => {
    const { yaml, environment, notes } = importArgoApplication(fixture("automated-retry.yaml"));
    const expected: EnvironmentConfig = {
      name: "payments-prod",
      source: { path: "overlays/prod", branch: "release" },
      destination: { namespace: "payments", cluster: "prod-eu", inCluster: false },
      syncPolicy: {
        automated: { prune: true, selfHeal: true, allowEmpty: false },
        syncOptions: {
          CreateNamespace: true,
          ApplyOutOfSyncOnly: false,
          PruneLast: true,
          PrunePropagationPolicy: "background",
          RespectIgnoreDifferences: false,
          ServerSideApply: true,
          Replace: false,
          FailOnSharedResource: false,
          Validate: true,
          SkipDryRunOnMissingResource: true,
        },
        // "10" is ten seconds in Argo CD; 5m0s is Go's spelling of five minutes.
        retry: { limit: 3, backoff: { duration: 10_000, factor: 3, maxDuration: 300_000 } },
      },
      ignoreDifferences: [
        {
          group: "apps",
          kind: "Deployment",
          jsonPointers: ["/spec/replicas"],
          jqPathExpressions: [],
          managedFieldsManagers: [],
        },
        {
          group: "",
          kind: "ConfigMap",
          name: "feature-flags",
          jsonPointers: [],
          jqPathExpressions: [],
          managedFieldsManagers: ["flagger"],
        },
      ],
      trustedManagers: [],
      notify: [],
      syncWindows: [],
      policy: { namespaces: ["payments"], clusterResources: [], requireSignedCommits: false },
      revisionHistoryLimit: 5,
      pollInterval: 180_000,
      production: false,
      commands: DEFAULT_COMMANDS,
    };
    assert.deepEqual(environment, expected);
    assert.ok(!notes.some((n) => n.includes("SkipDryRunOnMissingResource")));
    assert.ok(notes.some((n) => n.includes('project "payments"')));
    assert.ok(notes.some((n) => n.includes('destination.name "prod-eu" became destination.cluster')));
    assertPastes(yaml, environment);
  });

  it("imports an in-cluster Application pinned to a commit, with automation disabled (in-cluster.yaml)", () => {
    const { yaml, environment, notes } = importArgoApplication(fixture("in-cluster.yaml"));
    assert.equal(environment.name, "monitoring-stack");
    assert.deepEqual(environment.destination, { namespace: "monitoring", inCluster: true });
    assert.equal(environment.source.branch, "4f2c9d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e");
    // Carried over as written: the settings stay, and the environment syncs manually only.
    assert.deepEqual(environment.syncPolicy.automated, {
      prune: true,
      selfHeal: false,
      allowEmpty: false,
      enabled: false,
    });
    // Argo CD does not retry when `retry` has no limit: kept, not silently turned into 5 retries.
    assert.deepEqual(environment.syncPolicy.retry, {
      limit: 0,
      backoff: { duration: 500, factor: 2, maxDuration: 180_000 },
      refresh: true,
    });
    assert.deepEqual(environment.syncPolicy.managedNamespaceMetadata, {
      labels: { team: "observability" },
      annotations: { owner: "sre@example.com" },
    });
    const expectedNotes = [
      'name "Monitoring_Stack" became "monitoring-stack"',
      "looks like a commit SHA",
      "retry without limit does not retry in Argo CD",
      "syncward applies server-side by default",
    ];
    for (const text of expectedNotes)
      assert.ok(
        notes.some((n) => n.includes(text)),
        `missing note: ${text}`,
      );
    assertPastes(yaml, environment);
  });

  it("imports a Helm source with Argo CD's field names; the release keeps the Application's name", () => {
    const { yaml, environment, notes } = importArgoApplication(`
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop.web}
spec:
  source:
    repoURL: https://git.example.com/org/shop.git
    path: charts/web
    targetRevision: main
    helm:
      valueFiles: [values-prod.yaml, /env/prod.yaml]
      ignoreMissingValueFiles: true
      valuesObject: {replicaCount: 3}
      parameters: [{name: image.tag, value: "2.1.0", forceString: true}]
      fileParameters: [{name: config, path: files/config.json}]
      skipCrds: true
      passCredentials: false
      version: v3
      skipSchemaValidation: true
  destination: {server: https://kubernetes.default.svc, namespace: shop}
`);
    assert.equal(environment.name, "shop-web");
    assert.deepEqual(environment.source, {
      path: "charts/web",
      branch: "main",
      helm: {
        releaseName: "shop.web",
        valueFiles: ["values-prod.yaml", "/env/prod.yaml"],
        ignoreMissingValueFiles: true,
        valuesObject: { replicaCount: 3 },
        parameters: [{ name: "image.tag", value: "2.1.0", forceString: true }],
        fileParameters: [{ name: "config", path: "files/config.json" }],
        skipCrds: true,
        skipTests: false,
        passCredentials: false,
      },
    });
    assert.ok(
      notes.some((n) => n.includes("spec.source.helm.skipSchemaValidation has no syncward equivalent")),
    );
    assertPastes(yaml, environment);
  });

  it("imports sources of one chart path and value references to the same repository", () => {
    const { environment } = importArgoApplication(
      app({
        sources: [
          {
            repoURL: "https://git.example.com/o/r.git",
            targetRevision: "main",
            path: "charts/web",
            helm: { valueFiles: ["$vals/env/dev/values.yaml"] },
          },
          { repoURL: "https://git.example.com/o/r.git", targetRevision: "main", ref: "vals" },
        ],
        destination: { namespace: "n" },
      }),
    );
    assert.deepEqual(environment.source.helm?.valueFiles, ["/env/dev/values.yaml"]);
    assert.equal(environment.source.path, "charts/web");
    assert.equal(
      environment.source.helm?.releaseName,
      undefined,
      "the environment's name is the Application's",
    );
  });

  it("imports sources of one chart from a chart repository and its value files from this repository (multi-source.yaml)", () => {
    const { yaml, environment, notes } = importArgoApplication(fixture("multi-source.yaml"));
    const { helm, ...source } = environment.source;
    assert.deepEqual(source, {
      path: ".",
      branch: "dev",
      chart: "prometheus",
      repoURL: "https://prometheus-community.github.io/helm-charts",
      targetRevision: "15.7.1",
    });
    assert.deepEqual(helm?.valueFiles, ["/charts/prometheus/values.yaml"]);
    assert.ok(notes.some((n) => n.includes("SYNCWARD_HELM_REPOSITORIES")));
    assert.ok(
      notes.some((n) => n.includes("value files come from https://git.example.com/org/value-files.git")),
    );
    assertPastes(yaml, environment);
  });

  const refused: Array<{ name: string; text: string; problems: RegExp[] }> = [
    {
      name: "multi-source Application with two charts",
      text: app({
        sources: [
          { repoURL: "https://charts.example.com", chart: "a", targetRevision: "1.0.0" },
          { repoURL: "https://charts.example.com", chart: "b", targetRevision: "1.0.0" },
        ],
        destination: { namespace: "n" },
      }),
      problems: [
        /^multi-source applications \(spec\.sources\) are not supported beyond one path or chart and value references .*sources\[0\]: Helm chart "a"; sources\[1\]: Helm chart "b"/,
      ],
    },
    {
      name: "Helm chart without a namespace (helm.yaml)",
      text: fixture("helm.yaml"),
      problems: [/^spec\.destination\.namespace is empty/],
    },
    {
      name: "plugin source",
      text: app({
        source: { repoURL: "r", path: "p", plugin: { name: "cdk8s" } },
        destination: { namespace: "n" },
      }),
      problems: [/^config management plugins \(spec\.source\.plugin\) are not supported/],
    },
    {
      name: "Kustomize overrides",
      text: app({
        source: { path: "p", kustomize: { images: ["web=web:2"], namePrefix: "x-" } },
        destination: { namespace: "n" },
      }),
      problems: [/^Kustomize overrides in the Application \(spec\.source\.kustomize: images, namePrefix\)/],
    },
    {
      name: "jsonnet directory",
      text: app({
        source: { path: "p", directory: { jsonnet: { tlas: [] } } },
        destination: { namespace: "n" },
      }),
      problems: [/^directory options \(spec\.source\.directory: jsonnet\)/],
    },
    {
      name: "an ApplicationSet",
      text: "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: { name: x }\n",
      problems: [
        /^expected apiVersion argoproj\.io\/v1alpha1 and kind Application, got "argoproj\.io\/v1alpha1" "ApplicationSet"/,
      ],
    },
    {
      name: "values syncward refuses (revisionHistoryLimit 0)",
      text: app({ source: { path: "p" }, destination: { namespace: "n" }, revisionHistoryLimit: 0 }),
      problems: [/^revisionHistoryLimit: must be an integer from 1 to 100$/],
    },
  ];
  for (const c of refused) {
    it(`refuses ${c.name}, naming what is unsupported`, () => {
      assert.throws(
        () => importArgoApplication(c.text),
        (err) => {
          assert.ok(err instanceof ArgoImportError, String(err));
          assert.equal(err.problems.length, c.problems.length, err.message);
          for (const [i, re] of c.problems.entries()) assert.match(err.problems[i] ?? "", re);
          return true;
        },
      );
    });
  }

  it("reads the Application YAML safely", () => {
    assert.throws(() => importArgoApplication("apiVersion: !!js/function x\n"), ConfigError);
  });

  it("maps an external cluster by server URL to a note, and a destination name to a context", () => {
    const { environment, notes } = importArgoApplication(
      app({
        source: { path: "./k8s/", targetRevision: "refs/heads/develop" },
        destination: { server: "https://10.0.0.1:6443", namespace: "n" },
      }),
    );
    assert.deepEqual(environment.source, { path: "k8s", branch: "develop" });
    assert.deepEqual(environment.destination, { namespace: "n", inCluster: false });
    assert.ok(
      notes.some((n) => n.includes("destination.server https://10.0.0.1:6443: set destination.cluster")),
    );
  });
});

function app(spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Application",
    metadata: { name: "app" },
    spec,
  });
}
