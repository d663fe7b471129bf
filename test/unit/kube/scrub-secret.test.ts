import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scrubSecretValues } from "../../../src/kube/scrub-secret.ts";

const secret = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "creds" },
  data: { token: Buffer.from("plain-token-value").toString("base64") },
  stringData: { pin: 987654321, password: "hunter2-pass", short: "ab" },
};

describe("scrubSecretValues", () => {
  it("masks every value of a Secret the server quotes: numbers, strings, base64 and decoded", () => {
    const message = [
      ".stringData.pin: expected string, got &value.valueUnstructured{Value:987654321}",
      `"hunter2-pass" is weak`,
      `token ${Buffer.from("plain-token-value").toString("base64")} = plain-token-value`,
      "ab stays: too short to be a secret",
    ].join("\n");
    assert.equal(
      scrubSecretValues(message, secret),
      [
        ".stringData.pin: expected string, got &value.valueUnstructured{Value:********}",
        "******** is weak",
        "token ******** = ********",
        "ab stays: too short to be a secret",
      ].join("\n"),
    );
  });

  it("leaves messages about other kinds alone", () => {
    const cm = { ...secret, kind: "ConfigMap" };
    assert.equal(scrubSecretValues("Value:987654321", cm), "Value:987654321");
    assert.equal(scrubSecretValues("Value:987654321", undefined), "Value:987654321");
  });
});
