import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { touches } from "../../../src/reconciler/reconciler.ts";
import { helmInputs, includedDirs } from "../../../src/source/includes.ts";

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "syncward-inc-"));
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  return dir;
}

describe("includedDirs", () => {
  const dir = tree({
    "apps/pay/overlays/dev/kustomization.yaml":
      "resources: [../../base, extra.yaml]\ncomponents: [../../../../components/tls]\n",
    "apps/pay/base/kustomization.yaml": "resources: [deploy.yaml, https://example.com/remote.yaml]\n",
    "components/tls/kustomization.yaml": "kind: Component\n",
    "apps/shop/plain/cm.yaml": "kind: ConfigMap\n",
  });

  it("follows bases, resource folders and components transitively, ignoring remote ones", async () => {
    assert.deepEqual(await includedDirs(dir, "apps/pay/overlays/dev"), [
      "apps/pay/base",
      "apps/pay/overlays/dev",
      "components/tls",
    ]);
  });

  it("is just the path for a plain folder", async () => {
    assert.deepEqual(await includedDirs(dir, "apps/shop/plain"), ["apps/shop/plain"]);
  });

  const cases: Array<[string[], string[], boolean]> = [
    [["apps/pay/base"], ["apps/pay/base/deploy.yaml"], true],
    [["apps/pay/base"], ["apps/pay/basement/x.yaml"], false],
    [["apps/pay/overlays/dev", "components/tls"], ["components/tls/cert.yaml"], true],
    [["apps/shop/plain"], ["apps/pay/base/deploy.yaml", "README.md"], false],
    [[""], ["anything.yaml"], true],
  ];
  for (const [dirs, files, expected] of cases) {
    it(`a change to ${files.join(", ")} ${expected ? "touches" : "does not touch"} ${dirs.join(", ") || "the root"}`, () => {
      assert.equal(touches(dirs, files), expected);
    });
  }
});

describe("kustomize render errors", () => {
  it("name the broken file of a base at its line, not just kustomize's message", async () => {
    const { render } = await import("../../../src/source/render.ts");
    const { SourceError } = await import("../../../src/source/errors.ts");
    const dir = tree({
      "overlays/dev/kustomization.yaml": "resources: [../../base]\n",
      "base/kustomization.yaml": "resources: [deployment.yaml]\n",
      "base/deployment.yaml":
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: [3\n",
    });
    await assert.rejects(render(dir, "overlays/dev"), (err: unknown) => {
      assert.ok(err instanceof SourceError);
      assert.equal(err.problems[0]?.file, "base/deployment.yaml");
      assert.ok((err.problems[0]?.line ?? 0) >= 6, `line ${err.problems[0]?.line}`);
      assert.match(err.message, /^base\/deployment\.yaml:\d+: /m);
      assert.match(err.message, /kustomize build of 'overlays\/dev' failed/);
      return true;
    });
  });
});

describe("helmInputs", () => {
  it("lists a chart's value files and file parameters as repository paths", () => {
    assert.deepEqual(
      helmInputs("charts/web", {
        valueFiles: ["values-prod.yaml", "/env/prod/web.yaml"],
        fileParameters: [{ path: "/files/ca.pem" }],
      }),
      ["charts/web/values-prod.yaml", "env/prod/web.yaml", "files/ca.pem"],
    );
    assert.deepEqual(helmInputs("charts/web", undefined), []);
  });
});
