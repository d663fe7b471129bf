import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifests } from "../../../src/source/parse-manifests.ts";

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
