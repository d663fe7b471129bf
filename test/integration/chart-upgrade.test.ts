// The Helm chart against a real API server: the operator's projects ConfigMap is seeded once, an
// upgrade (with another `projects` value, or none) never overwrites the edits made since, uninstalling
// keeps it, and a syncward-projects the chart did not create is never touched.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { kubectl, useCluster } from "../support/cluster.ts";
import { ensureHelm } from "../support/helm.ts";

const CHART = join(import.meta.dirname, "..", "..", "deploy", "chart", "syncward");
const helmBin = ensureHelm();
const work = mkdtempSync(join(tmpdir(), "syncward-chart-it-"));
const releases: string[] = [];
after(() => {
  // The cluster-scoped objects outlive the test's namespaces: a test that failed half-way uninstalls here.
  for (const ns of releases) helm(["uninstall", "sw", "-n", ns, "--ignore-not-found"]);
  rmSync(work, { recursive: true, force: true });
});
// After the hook above: hooks run in order, so the releases go before their namespaces.
const cluster = useCluster();

function helm(args: string[], values?: Record<string, unknown>): string {
  const file = join(work, `values-${Math.random().toString(36).slice(2)}.json`);
  if (values) writeFileSync(file, JSON.stringify(values));
  return execFileSync(
    helmBin,
    [...args, "--kubeconfig", cluster.kubeconfig, ...(values ? ["-f", file] : [])],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  ).toString();
}

const doc = (name: string) =>
  `projects:\n  - name: ${name}\n    repositories: ["acme/${name}"]\n    destinations: [{namespace: ${name}}]\n`;

function projects(
  ns: string,
): { data: Record<string, string>; annotations: Record<string, string> } | undefined {
  const out = kubectl([
    "-n",
    ns,
    "get",
    "configmap",
    "syncward-projects",
    "-o",
    "json",
    "--ignore-not-found",
  ]);
  if (!out.trim()) return undefined;
  const cm = JSON.parse(out);
  return { data: cm.data, annotations: cm.metadata.annotations ?? {} };
}

function exists(kind: string, name: string, ns?: string): boolean {
  return (
    kubectl([...(ns ? ["-n", ns] : []), "get", kind, name, "--ignore-not-found", "-o", "name"]).trim() !== ""
  );
}

describe("the chart's upgrade path", () => {
  it("seeds the projects once; upgrades and uninstall keep the operator's edits", async () => {
    const ns = await cluster.namespace("chart");
    releases.push(ns);
    const fullnameOverride = `sw-${ns}`;
    const base = ["-n", ns];
    helm(["install", "sw", CHART, ...base], { fullnameOverride, projects: doc("shop") });
    assert.equal(projects(ns)?.data["projects.yaml"], doc("shop"));
    assert.equal(projects(ns)?.annotations["helm.sh/resource-policy"], "keep");

    // The operator edits the document in the cluster.
    kubectl([
      "-n",
      ns,
      "patch",
      "configmap",
      "syncward-projects",
      "--type=merge",
      "-p",
      JSON.stringify({ data: { "projects.yaml": doc("edited") } }),
    ]);

    helm(["upgrade", "sw", CHART, ...base], {
      fullnameOverride,
      projects: doc("other"),
      image: { tag: "0.2.0" },
    });
    assert.equal(
      projects(ns)?.data["projects.yaml"],
      doc("edited"),
      "an upgrade with another value leaves the edit",
    );
    const image = kubectl([
      "-n",
      ns,
      "get",
      "deployment",
      fullnameOverride,
      "-o",
      "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    assert.equal(image, "ghcr.io/your-org/syncward:0.2.0", "the upgrade itself went through");

    helm(["upgrade", "sw", CHART, ...base], { fullnameOverride });
    assert.equal(
      projects(ns)?.data["projects.yaml"],
      doc("edited"),
      "an upgrade without the value keeps the ConfigMap",
    );

    helm(["uninstall", "sw", ...base]);
    assert.equal(projects(ns)?.data["projects.yaml"], doc("edited"), "uninstalling keeps it");
    assert.equal(exists("deployment", fullnameOverride, ns), false, "the rest is gone");
    assert.equal(exists("clusterrole", `${fullnameOverride}-manager`), false);
  });

  it("leaves a syncward-projects created outside the chart alone", async () => {
    const ns = await cluster.namespace("chart-own");
    releases.push(ns);
    const fullnameOverride = `sw-${ns}`;
    kubectl([
      "-n",
      ns,
      "create",
      "configmap",
      "syncward-projects",
      `--from-literal=projects.yaml=${doc("mine")}`,
    ]);
    helm(["install", "sw", CHART, "-n", ns], { fullnameOverride, projects: doc("shop") });
    assert.equal(projects(ns)?.data["projects.yaml"], doc("mine"));
    assert.equal(
      projects(ns)?.annotations["meta.helm.sh/release-name"],
      undefined,
      "not taken over by the release",
    );
    helm(["uninstall", "sw", "-n", ns]);
    assert.equal(exists("clusterrole", `${fullnameOverride}-manager`), false);
  });
});
