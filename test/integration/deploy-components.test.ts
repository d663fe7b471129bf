// deploy/components as a user adds them in an overlay of deploy/: rendered with the real
// `kubectl kustomize`, the API server's dry-run for the built-in kinds, and the monitoring parts
// checked against the metrics syncward really exports. Every combination, in every order, and the
// RBAC it grants: test/unit/deploy/components.test.ts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../src/kube/object.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { useCluster } from "../support/cluster.ts";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
const cluster = useCluster();

/** deploy/ as the base of an overlay with `components`, moved to `namespace`. */
function overlay(components: string[], namespace = "syncward"): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), "syncward-components-"));
  try {
    const list = components.map((c) => `  - ${relative(dir, join(DEPLOY, "components", c))}`).join("\n");
    writeFileSync(
      join(dir, "kustomization.yaml"),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ${namespace}\nresources:\n  - ${relative(dir, DEPLOY)}\ncomponents:\n${list}\n`,
    );
    const out = execFileSync("kubectl", ["kustomize", dir], { stdio: ["ignore", "pipe", "pipe"] }).toString();
    return parseAllDocuments(out)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const find = (objects: KubeObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind}/${name} rendered`);
  return found as KubeObject & Record<string, unknown>;
};

type Rules = Array<{ apiGroups?: string[]; resources?: string[]; verbs: string[] }>;
const grants = (rules: Rules) =>
  rules.flatMap((r) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${v} ${res}`)));

interface PodTemplate {
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: Array<{ ports?: Array<{ name?: string }> }> };
    };
  };
}

/** Every metric name a PromQL expression mentions (syncward_* and process_*). */
const metricNames = (expr: string) =>
  [...expr.matchAll(/\b((?:syncward|process)_[a-z_]+)\b/g)].map((m) => m[1] as string);

async function exportedNames(): Promise<Set<string>> {
  const text = await createMetrics().registry.metrics();
  const names = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^# TYPE (\S+) (\S+)/.exec(line);
    if (!m?.[1]) continue;
    names.add(m[1]);
    if (m[2] === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(`${m[1]}${s}`);
  }
  return names;
}

describe("deploy/components", () => {
  it("cluster-resources adds only the opt-in ClusterRole and its binding", () => {
    const base = overlay([]);
    const withIt = overlay(["cluster-resources"]);
    const added = withIt.filter(
      (o) => !base.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name),
    );
    assert.deepEqual(added.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      "ClusterRole/syncward-cluster-resources",
      "ClusterRoleBinding/syncward-cluster-resources",
    ]);
  });

  it("previews adds its ClusterRole (namespaces and their guards) and a Role in syncward's namespace (a torn-down preview's state and Lease), nothing else", () => {
    const base = overlay([]);
    const withIt = overlay(["previews"]);
    const added = withIt.filter(
      (o) => !base.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name),
    );
    assert.deepEqual(added.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      "ClusterRole/syncward-previews",
      "ClusterRoleBinding/syncward-previews",
      "Role/syncward-previews-state",
      "RoleBinding/syncward-previews-state",
    ]);
    const state = find(withIt, "Role", "syncward-previews-state") as unknown as {
      metadata: { namespace: string };
      rules: Rules;
    };
    assert.equal(state.metadata.namespace, "syncward");
    assert.deepEqual(grants(state.rules).sort(), ["delete configmaps", "delete leases"]);
    const role = find(withIt, "ClusterRole", "syncward-previews") as unknown as { rules: Rules };
    assert.deepEqual(grants(role.rules).sort(), [
      "create limitranges",
      "create namespaces",
      "create resourcequotas",
      "delete namespaces",
      "get limitranges",
      "get namespaces",
      "get resourcequotas",
      "patch limitranges",
      "patch resourcequotas",
    ]);
  });

  it("narrow-secrets leaves no cluster-wide Secret access and a per-namespace role to bind", () => {
    const base = grants(find(overlay([]), "ClusterRole", "syncward-manager").rules as unknown as Rules);
    assert.ok(base.includes("list secrets"), "the base grants Secrets cluster-wide");
    const objects = overlay(["narrow-secrets"]);
    const manager = grants(find(objects, "ClusterRole", "syncward-manager").rules as unknown as Rules);
    assert.deepEqual(
      manager.filter((g) => g.endsWith(" secrets")),
      [],
    );
    assert.deepEqual(
      manager,
      base.filter((g) => !g.endsWith(" secrets")),
      "everything else is kept",
    );
    const secrets = grants(find(objects, "ClusterRole", "syncward-secrets").rules as unknown as Rules);
    assert.deepEqual(
      secrets.sort(),
      ["create", "delete", "get", "list", "patch", "update", "watch"].map((v) => `${v} secrets`),
    );
    assert.equal(
      objects.some(
        (o) =>
          o.kind.endsWith("Binding") &&
          (o as { roleRef?: { name: string } }).roleRef?.name === "syncward-secrets",
      ),
      false,
      "bound per namespace by the user, never cluster-wide",
    );
  });

  it("monitoring's PodMonitor selects the app's pods on a port they have", () => {
    const objects = overlay(["monitoring"]);
    const deployment = find(objects, "Deployment", "syncward") as unknown as PodTemplate;
    const monitor = find(objects, "PodMonitor", "syncward") as unknown as {
      metadata: { namespace: string };
      spec: {
        selector: { matchLabels: Record<string, string> };
        podMetricsEndpoints: Array<{ port: string; path: string }>;
      };
    };
    assert.equal(monitor.metadata.namespace, "syncward");
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
      assert.equal(deployment.spec.template.metadata.labels[k], v, `pods carry ${k}=${v}`);
    const ports = deployment.spec.template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
    for (const endpoint of monitor.spec.podMetricsEndpoints) {
      assert.ok(ports.includes(endpoint.port), `port ${endpoint.port} exists`);
      assert.equal(endpoint.path, "/metrics");
    }
  });

  it("monitoring's alerts and the Grafana dashboard query only series syncward exports", async () => {
    const names = await exportedNames();
    const rule = find(overlay(["monitoring"]), "PrometheusRule", "syncward") as unknown as {
      spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    };
    const alerts = rule.spec.groups.flatMap((g) => g.rules);
    assert.deepEqual(alerts.map((a) => a.alert).sort(), [
      "SyncwardAutoRollback",
      "SyncwardClusterUnreachable",
      "SyncwardDegraded",
      "SyncwardDown",
      "SyncwardDriftFight",
      "SyncwardGitHubErrors",
      "SyncwardGitHubRateLimitLow",
      "SyncwardKubernetesErrors",
      "SyncwardOutOfSync",
      "SyncwardPreviewTeardownStuck",
      "SyncwardSyncFailing",
      "SyncwardWebhooksSlow",
    ]);
    const dashboard = JSON.parse(readFileSync(join(DEPLOY, "grafana", "syncward.json"), "utf8")) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
      templating: { list: Array<{ definition?: string }> };
    };
    const exprs = [
      ...alerts.map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => ({ where: `panel ${p.title}`, expr: t.expr }))),
      ...dashboard.templating.list.flatMap((v) =>
        v.definition ? [{ where: "variable", expr: v.definition }] : [],
      ),
    ];
    assert.ok(exprs.length > 10);
    for (const { where, expr } of exprs) {
      const used = metricNames(expr);
      assert.ok(used.length > 0, `${where} queries a syncward series`);
      for (const name of used) assert.ok(names.has(name), `${where}: ${name} is not exported`);
    }
  });

  describe("on the API server", () => {
    let ns = "";
    before(async () => {
      ns = await cluster.namespace("sw-components");
    });

    it("accepts the NetworkPolicy and the narrowed roles in a server-side dry-run, and the policy selects the pods", async () => {
      const objects = overlay(["network-policy", "narrow-secrets"], ns);
      const policy = find(objects, "NetworkPolicy", "syncward") as unknown as {
        spec: {
          podSelector: { matchLabels: Record<string, string> };
          egress: Array<{ ports: Array<{ port: number | string }> }>;
        };
      };
      const deployment = find(objects, "Deployment", "syncward") as unknown as PodTemplate;
      for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels))
        assert.equal(deployment.spec.template.metadata.labels[k], v);
      const egressPorts = policy.spec.egress.flatMap((e) => e.ports.map((p) => p.port)).sort();
      assert.deepEqual(egressPorts, [443, 53, 53, 6443]);
      for (const obj of [policy, find(objects, "ClusterRole", "syncward-secrets")] as KubeObject[]) {
        const result = await cluster.client.apply(
          obj.metadata.name === "syncward-secrets"
            ? { ...obj, metadata: { ...obj.metadata, name: `${ns}-secrets` } }
            : obj,
          { dryRun: true },
        );
        assert.equal(result.kind, obj.kind);
      }
    });
  });
});
