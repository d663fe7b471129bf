import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { parseManifests } from "../../../src/source/parse-manifests.ts";
import { render } from "../../../src/source/render.ts";
import { cleanup, tempDir, writeTree } from "./helpers.ts";

describe("Secret values in manifests", () => {
  it("refuses a value that is not a string, naming the key and line but never the value", () => {
    const text = [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: fine}",
      "data: {port: 8080}",
      "---",
      "apiVersion: v1",
      "kind: Secret",
      "metadata: {name: creds}",
      "stringData: {pin: 987654321, user: admin}",
      "data: {list: [1, 2]}",
    ].join("\n");
    const { objects, problems } = parseManifests(text, "app/secret.yaml");
    assert.deepEqual(
      objects.map((o) => o.object.metadata.name),
      ["fine"],
    );
    assert.deepEqual(problems, [
      {
        file: "app/secret.yaml",
        line: 6,
        message:
          "document: Secret data.list must be a string, found a sequence (quote it in YAML; the value is not shown); Secret stringData.pin must be a string, found a number (quote it in YAML; the value is not shown)",
      },
    ]);
    assert.ok(!JSON.stringify(problems).includes("987654321"));
  });
});

describe("Secret values in kustomize errors", () => {
  it("does not repeat a secretGenerator literal that is not key=value", async () => {
    const tree = tempDir();
    writeTree(tree, {
      "app/kustomization.yaml": 'secretGenerator:\n- name: creds\n  literals: ["sw-forgot-the-key-91"]\n',
    });
    try {
      await assert.rejects(render(tree, "app"), (err: unknown) => {
        assert.ok(err instanceof SourceError);
        assert.match(err.message, /a generator literal is not key=value \(its text is not shown\)/);
        assert.doesNotMatch(err.message, /sw-forgot-the-key-91/);
        return true;
      });
    } finally {
      cleanup(tree);
    }
  });
});
