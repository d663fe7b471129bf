import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SourceError } from "../../../src/source/errors.ts";
import { parseManifests } from "../../../src/source/parse-manifests.ts";
import { render } from "../../../src/source/render.ts";
import { scrubRenderProblems } from "../../../src/source/scrub-render-error.ts";
import { cleanup, FIXTURES, tempDir, writeTree } from "./helpers.ts";

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

describe("Secret values in kustomize errors from env files", () => {
  it("names the env file and line of an invalid UTF-8 line, never its text or bytes", async () => {
    await assert.rejects(render(FIXTURES, "evil/secret-env"), (err: unknown) => {
      assert.ok(err instanceof SourceError);
      assert.match(
        err.message,
        /evil\/secret-env\/db\.env:2 has invalid UTF-8 bytes \(the line is not shown\)/,
      );
      assert.doesNotMatch(err.message, /hunter2|DB_PASSWORD=|sw-token|\[68 66/);
      for (const p of err.problems) assert.doesNotMatch(p.message, /hunter2/);
      return true;
    });
  });

  it("masks a file's content and a literal wherever a message quotes them", async () => {
    const tree = tempDir();
    writeTree(tree, { "app/tls.key": "-----BEGIN KEY-----\nsw-file-secret-content-12\n-----END KEY-----\n" });
    try {
      const [problem] = await scrubRenderProblems(
        [
          {
            file: "app/kustomization.yaml",
            message: 'cannot use "sw-file-secret-content-12" or sw-literal-secret-77 or "a=b\\"sw-quoted-99"',
          },
        ],
        tree,
        { files: [join(tree, "app/tls.key")], literals: ["sw-literal-secret-77", 'b"sw-quoted-99'] },
      );
      assert.deepEqual(problem, {
        file: "app/kustomization.yaml",
        message: 'cannot use "********" or ******** or "a=********"',
      });
    } finally {
      cleanup(tree);
    }
  });
});
