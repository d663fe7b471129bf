// Size and count limits of a render: a huge manifest is refused by its size before it is read, a
// render with too many objects or bytes is refused whole, and a large render within the limits works.
import assert from "node:assert/strict";
import { closeSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { DEFAULT_LIMITS, limitsFromEnv } from "../../../src/source/limits.ts";
import { type RenderOptions, render } from "../../../src/source/render.ts";
import { cleanup, tempDir, writeTree } from "./helpers.ts";

const MiB = 1024 * 1024;

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;

/** A 50 MiB file that is not even YAML: reading it would add a YAML problem to the size problem. */
function hugeFile(path: string): void {
  const fd = openSync(path, "w");
  writeSync(fd, "\t- : ][ not yaml at all\n");
  ftruncateSync(fd, 50 * MiB);
  closeSync(fd);
}

async function problemsOf(tree: string, path: string, options: RenderOptions = {}): Promise<string[]> {
  try {
    await render(tree, path, options);
  } catch (err) {
    assert.ok(err instanceof SourceError, String(err));
    return err.message.split("\n");
  }
  assert.fail(`the render of ${path} should have been refused`);
}

describe("render limits", () => {
  let tree: string;
  before(() => {
    tree = tempDir();
    const many = Array.from({ length: 10_000 }, (_, i) => configMap(`cm-${i}`)).join("---\n");
    writeTree(tree, {
      "huge/a.yaml": configMap("a"),
      "kustomized/kustomization.yaml": "resources: [a.yaml, huge.yaml]\n",
      "kustomized/a.yaml": configMap("a"),
      "many/all.yaml": many,
      "three/a.yaml": configMap(`a-${"x".repeat(500)}`),
      "three/b.yaml": configMap(`b-${"x".repeat(500)}`),
      "three/c.yaml": configMap(`c-${"x".repeat(500)}`),
      "three-k/kustomization.yaml": "resources: [a.yaml, b.yaml, c.yaml]\n",
      "three-k/a.yaml": configMap(`a-${"x".repeat(500)}`),
      "three-k/b.yaml": configMap(`b-${"x".repeat(500)}`),
      "three-k/c.yaml": configMap(`c-${"x".repeat(500)}`),
    });
    hugeFile(join(tree, "huge/big.yaml"));
    hugeFile(join(tree, "kustomized/huge.yaml"));
  });
  after(() => cleanup(tree));

  it("refuses a 50 MiB manifest by its size, naming file and size, without reading it", async () => {
    assert.deepEqual(await problemsOf(tree, "huge"), [
      "huge/big.yaml: manifest file is 50.0 MiB (52428800 bytes); the limit is 8.0 MiB (8388608 bytes) (SYNCWARD_MAX_MANIFEST_BYTES); refused without reading it",
    ]);
  });

  it("refuses a 50 MiB manifest in a kustomization before kustomize runs", async () => {
    assert.deepEqual(await problemsOf(tree, "kustomized"), [
      "kustomized/huge.yaml: manifest file is 50.0 MiB (52428800 bytes); the limit is 8.0 MiB (8388608 bytes) (SYNCWARD_MAX_MANIFEST_BYTES); refused without reading it",
    ]);
  });

  it("refuses a 10,000-document render whole by default, naming the count and the limit", async () => {
    assert.deepEqual(await problemsOf(tree, "many"), [
      `many: the render produced 10000 objects; the limit is ${DEFAULT_LIMITS.maxObjects} (SYNCWARD_MAX_OBJECTS); nothing is applied`,
    ]);
  });

  it("renders the same 10,000 documents, nothing lost, once the operator raises the limit", async () => {
    const result = await render(tree, "many", { limits: { maxObjects: 10_000 } });
    assert.equal(result.objects.length, 10_000);
    assert.equal(result.lines.get("/ConfigMap:/cm-9999"), 9999 * 5 + 1);
  });

  it("stops reading a plain directory at the total byte limit", async () => {
    const problems = await problemsOf(tree, "three", { limits: { maxRenderBytes: 1200 } });
    assert.equal(problems.length, 1);
    assert.match(
      problems[0]!,
      /^three\/c\.yaml: the manifests read so far and this file come to more than 1\.2 KiB \(1200 bytes\) \(SYNCWARD_MAX_RENDER_BYTES\); the rest is not read$/,
    );
  });

  it("refuses kustomize output over the total byte limit", async () => {
    const problems = await problemsOf(tree, "three-k", { limits: { maxRenderBytes: 1200 } });
    assert.deepEqual(problems, [
      "three-k/kustomization.yaml: kustomize build of 'three-k' produced more than 1.2 KiB (1200 bytes) (SYNCWARD_MAX_RENDER_BYTES); refused",
    ]);
  });
});

describe("limitsFromEnv", () => {
  it("takes the defaults, overridden by the variables that are set", () => {
    assert.deepEqual(limitsFromEnv({}), DEFAULT_LIMITS);
    assert.deepEqual(limitsFromEnv({ SYNCWARD_MAX_OBJECTS: "20000", SYNCWARD_MAX_MANIFEST_BYTES: "" }), {
      ...DEFAULT_LIMITS,
      maxObjects: 20_000,
    });
  });

  for (const value of ["0", "-1", "1e6", "10MB", "abc"]) {
    it(`refuses SYNCWARD_MAX_RENDER_BYTES=${value}`, () => {
      assert.throws(
        () => limitsFromEnv({ SYNCWARD_MAX_RENDER_BYTES: value }),
        /SYNCWARD_MAX_RENDER_BYTES=".*": expected a whole number greater than 0/,
      );
    });
  }
});
