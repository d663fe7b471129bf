import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { keyOf, keyString } from "../../../src/kube/object.ts";
import { SourceError } from "../../../src/source/errors.ts";
import { type RenderedSource, render } from "../../../src/source/render.ts";
import { cleanup, FIXTURES, tempDir, writeTree } from "./helpers.ts";

function where(result: RenderedSource): string[] {
  return result.objects.map((o) => {
    const key = keyString(keyOf(o));
    return `${key} ${result.files.get(key)}:${result.lines.get(key)}`;
  });
}

async function problemsOf(treeDir: string, path: string, options = {}): Promise<string[]> {
  try {
    await render(treeDir, path, options);
  } catch (err) {
    assert.ok(err instanceof SourceError, `expected a SourceError, got ${String(err)}`);
    return err.message.split("\n");
  }
  assert.fail(`render of ${path} should have failed`);
}

/** What `kubectl kustomize` prints for a directory, parsed: the reference the renderer must match. */
function kustomizeDirectly(dir: string): unknown[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  return parseAllDocuments(out).map((d) => d.toJS());
}

describe("render: kustomize", () => {
  it("renders an overlay (base, patch, namePrefix, labels, configMapGenerator) like kubectl kustomize", async () => {
    const result = await render(FIXTURES, "kustomize/overlays/dev");
    assert.equal(result.renderer, "kustomize");
    const cm = result.objects.find((o) => o.kind === "ConfigMap");
    assert.match(cm?.metadata.name ?? "", /^dev-web-config-[a-z0-9]{10}$/);
    assert.deepEqual(where(result), [
      "/ResourceQuota:/dev-compute kustomize/overlays/dev/quota.yaml:1",
      `/ConfigMap:/${cm?.metadata.name} kustomize/overlays/dev/kustomization.yaml:13`,
      "/Service:/dev-web kustomize/base/service.yaml:2",
      "apps/Deployment:/dev-web kustomize/base/deployment.yaml:1",
    ]);
    const deploy = result.objects[3]!;
    const spec = deploy.spec as {
      replicas: number;
      template: { spec: { containers: Array<{ envFrom: Array<{ configMapRef: { name: string } }> }> } };
    };
    assert.equal(spec.replicas, 3);
    assert.equal(spec.template.spec.containers[0]?.envFrom[0]?.configMapRef.name, cm?.metadata.name);
    assert.deepEqual(deploy.metadata.labels, { env: "dev" });
    // The origin annotations asked for to find source files are gone; the object's own stay.
    assert.deepEqual(deploy.metadata.annotations, { team: "storefront" });
    assert.equal(cm?.metadata.annotations, undefined);
    // Exactly what kustomize itself renders.
    assert.deepEqual(result.objects, kustomizeDirectly(join(FIXTURES, "kustomize/overlays/dev")));
  });

  it("renders a base", async () => {
    const result = await render(join(FIXTURES, "kustomize"), "base");
    assert.deepEqual(where(result), [
      "/Service:/web base/service.yaml:2",
      "apps/Deployment:/web base/deployment.yaml:1",
    ]);
  });

  it("names the kustomization directory and kustomize's message when a resource is missing", async () => {
    await assert.rejects(render(FIXTURES, "kustomize/overlays/broken"), (err: unknown) => {
      assert.ok(err instanceof SourceError);
      assert.equal(err.file, "kustomize/overlays/broken/kustomization.yaml");
      assert.equal(err.problems.length, 1);
      assert.match(
        err.message,
        /^kustomize\/overlays\/broken\/kustomization\.yaml: kustomize build of 'kustomize\/overlays\/broken' failed: accumulating resources: .*accumulating resources from 'missing\.yaml'/,
      );
      assert.match(
        err.message,
        /lstat kustomize\/overlays\/broken\/missing\.yaml: no such file or directory/,
      );
      assert.ok(!err.message.includes(FIXTURES), "paths are relative to the repository");
      assert.ok(!err.message.includes("run.go"), "kubectl's log prefix is removed");
      return true;
    });
  });

  it("refuses remote resources and resources outside the repository without running kustomize", async () => {
    const options = { kubectl: "/nonexistent/kubectl" };
    assert.deepEqual(await problemsOf(FIXTURES, "evil/kustomize", options), [
      "evil/kustomize/kustomization.yaml:4: resources: 'https://github.com/evil/manifests//base?ref=main' is a URL or remote address; refused: render only what the repository holds at this revision (vendor it into the repository)",
      "evil/kustomize/kustomization.yaml:5: resources: 'github.com/evil/manifests/base?ref=v1' is a URL or remote address; refused: render only what the repository holds at this revision (vendor it into the repository)",
      "evil/kustomize/kustomization.yaml:6: resources: '../../../../../../etc' points outside the repository; refused",
    ]);
    assert.deepEqual(await problemsOf(FIXTURES, "evil/kustomize-bomb", options), [
      "evil/kustomize-bomb/kustomization.yaml:3: refused YAML tag !custom: only plain YAML is accepted (no custom or language-specific tags)",
    ]);
  });

  it("refuses an overlay whose base lies outside the tree being rendered", async () => {
    assert.deepEqual(await problemsOf(join(FIXTURES, "kustomize/overlays"), "dev"), [
      "dev/kustomization.yaml:8: resources: '../../base' points outside the repository; refused",
    ]);
  });

  it("says when kubectl is missing", async () => {
    const problems = await problemsOf(FIXTURES, "kustomize/base", { kubectl: "/nonexistent/kubectl" });
    assert.deepEqual(problems, [
      "kustomize/base/kustomization.yaml: kustomize build of 'kustomize/base' failed: '/nonexistent/kubectl' was not found; kubectl (or kustomize through it) is needed to render kustomizations",
    ]);
  });

  it("stops kustomize at the deadline", async () => {
    const problems = await problemsOf(FIXTURES, "kustomize/overlays/dev", { timeoutMs: 1 });
    assert.deepEqual(problems, [
      "kustomize/overlays/dev/kustomization.yaml: kustomize build of 'kustomize/overlays/dev' failed: timed out after 1 ms",
    ]);
  });

  describe("in a scratch tree", () => {
    let root: string;
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
    before(() => {
      root = tempDir();
      writeTree(root, {
        "outside/secret.txt": "password=hunter2\n",
        "outside/base/kustomization.yaml": "resources: [cm.yaml]\n",
        "outside/base/cm.yaml": cm("stolen"),
        "repo/yml/kustomization.yml": "resources: [cm.yaml]\nnameSuffix: -yml\n",
        "repo/yml/cm.yaml": cm("a"),
        "repo/bare/Kustomization": "resources: [cm.yaml]\nnameSuffix: -bare\n",
        "repo/bare/cm.yaml": cm("b"),
        "repo/origins/kustomization.yaml": "resources: [cm.yaml]\nbuildMetadata: [originAnnotations]\n",
        "repo/origins/cm.yaml": cm("c"),
        "repo/leak/kustomization.yaml":
          "resources:\n  - cm.yaml\n  - linked-base\nconfigMapGenerator:\n  - name: creds\n    files: [secret.txt]\n",
        "repo/leak/cm.yaml": cm("d"),
        "repo/leak/secret.txt": { symlink: "../../outside/secret.txt" },
        "repo/leak/linked-base": { symlink: "../../outside/base" },
        "repo/shared/kustomization.yaml": "resources: [cm.yaml]\n",
        "repo/shared/cm.yaml": cm("shared"),
        "repo/inlink/kustomization.yaml": "resources: [shared]\n",
        "repo/inlink/shared": { symlink: "../shared" },
      });
    });
    after(() => cleanup(root));

    const names: Array<{ dir: string; name: string }> = [
      { dir: "yml", name: "/ConfigMap:/a-yml yml/cm.yaml:1" },
      { dir: "bare", name: "/ConfigMap:/b-bare bare/cm.yaml:1" },
      // Through a symlinked directory: the file where the content lives is named.
      { dir: "inlink", name: "/ConfigMap:/shared shared/cm.yaml:1" },
    ];
    for (const { dir, name } of names) {
      it(`finds the kustomization in ${dir}/`, async () => {
        const result = await render(join(root, "repo"), dir);
        assert.equal(result.renderer, "kustomize");
        assert.deepEqual(where(result), [name]);
      });
    }

    it("keeps origin annotations a kustomization asks for", async () => {
      const result = await render(join(root, "repo"), "origins");
      assert.equal(
        result.objects[0]?.metadata.annotations?.["config.kubernetes.io/origin"],
        "path: cm.yaml\n",
      );
      assert.deepEqual(where(result), ["/ConfigMap:/c origins/cm.yaml:1"]);
    });

    it("refuses symlinks that lead kustomize outside the repository", async () => {
      assert.deepEqual(await problemsOf(join(root, "repo"), "leak"), [
        "leak/kustomization.yaml:3: resources: 'linked-base' leads outside the repository through a symlink; refused",
        "leak/kustomization.yaml:6: configMapGenerator[0].files: 'secret.txt' leads outside the repository through a symlink; refused",
        "leak/linked-base: symlink points outside the repository (-> ../../outside/base); refused",
        "leak/secret.txt: symlink points outside the repository (-> ../../outside/secret.txt); refused",
      ]);
    });
  });
});
