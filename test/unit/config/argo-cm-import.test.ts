// `syncward import-argo argocd-cm.yaml`: Argo CD's resource.customizations health checks (both the
// single-key block and the per-kind keys) become the operator's `resourceCustomizations`, for the
// projects document (or --health-config); useOpenLibs is dropped with a note (every script is sandboxed).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { importArgoConfigMap } from "../../../src/config/argo-cm-import.ts";
import { ArgoImportError } from "../../../src/config/argo-import.ts";
import { compileHealthChecks } from "../../../src/engine/health/index.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { parseProjects } from "../../../src/projects/load.ts";

const FIXTURE = join(import.meta.dirname, "..", "..", "fixtures", "config", "argo", "argocd-cm.yaml");
const ENV =
  'projects:\n  - name: team-a\n    repositories: ["acme/*"]\n    destinations: [{ namespace: "*" }]\n';

function importError(text: string): ArgoImportError {
  try {
    importArgoConfigMap(text);
  } catch (err) {
    assert.ok(err instanceof ArgoImportError, String(err));
    return err;
  }
  assert.fail("the ConfigMap was imported");
}

describe("import-argo of argocd-cm", () => {
  const imported = importArgoConfigMap(readFileSync(FIXTURE, "utf8"));

  test("both forms are read, keyed as Argo CD keys them; split keys join group and kind at the last _", () => {
    assert.deepEqual(Object.keys(imported.resourceCustomizations).sort(), [
      "*.upbound.io/*",
      "ConfigMap",
      "argoproj.io/Rollout",
      "cert-manager.io/Certificate",
    ]);
    // useOpenLibs is not carried over: every script runs in the sandbox.
    assert.ok(
      Object.values(imported.resourceCustomizations).every((c) => Object.keys(c).join() === "health.lua"),
    );
  });

  test("what has no syncward equivalent is dropped with a note", () => {
    assert.deepEqual(imported.notes, [
      "*.upbound.io/*: useOpenLibs was dropped: every health script runs in syncward's sandbox (no os.execute, io, package or debug)",
      "*.upbound.io/*: actions has no syncward equivalent and was dropped",
      "argoproj.io/Rollout: useOpenLibs was dropped: every health script runs in syncward's sandbox (no os.execute, io, package or debug)",
      'data["resource.customizations.ignoreDifferences.admissionregistration.k8s.io_MutatingWebhookConfiguration"] has no syncward equivalent and was dropped',
    ]);
    assert.match(imported.yaml, /^# NOTE: \*\.upbound\.io\/\*: actions has no syncward equivalent/m);
  });

  test("the printed YAML, pasted into the projects document, loads and its scripts run", () => {
    const config = parseProjects(`${ENV}${imported.yaml}`, "projects.yaml");
    assert.deepEqual(config.resourceCustomizations, imported.resourceCustomizations);
    const checks = compileHealthChecks(config.resourceCustomizations);
    const rollout = {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Rollout",
      metadata: { name: "r" },
      status: { phase: "Paused" },
    } as KubeObject;
    assert.deepEqual(checks.assess(rollout), { status: "Suspended", message: "paused" });
    const bucket = {
      apiVersion: "s3.aws.upbound.io/v1beta1",
      kind: "Bucket",
      metadata: { name: "b" },
      status: { conditions: [{ type: "Ready", status: "False", reason: "Creating" }] },
    } as KubeObject;
    assert.deepEqual(checks.assess(bucket), { status: "Progressing", message: "Creating" });
  });

  test("a script that does not compile fails the import, naming the kind and the script's line", () => {
    const err = importError(`apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-cm }
data:
  resource.customizations.health.example.com_Widget: |
    if obj.status then
      return { status = "Healthy" }
`);
    assert.deepEqual(err.problems, [
      `resourceCustomizations["example.com/Widget"]["health.lua"]: Lua does not compile (line 3 of the script): 'end' expected (to close 'if' at line 1) near <eof>`,
    ]);
  });

  test("a ConfigMap without health checks is refused with what was expected", () => {
    const err = importError(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-cm }\ndata:\n  url: https://x\n",
    );
    assert.match(err.problems[0] ?? "", /no health checks found/);
  });
});
