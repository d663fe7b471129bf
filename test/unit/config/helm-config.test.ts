// source.helm in .github/syncward.yml: Argo CD's field names, every mistake named by its field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";

const FILE = ".github/syncward.yml";

function problemsOf(helm: string): string[] {
  const text = `environments:\n  - name: dev\n    destination: {namespace: web}\n    source:\n      path: charts/web\n      helm:\n${helm
    .split("\n")
    .map((l) => `        ${l}`)
    .join("\n")}\n`;
  try {
    parseConfig(text, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => p.slice(FILE.length + 1).trim());
  }
  assert.fail("expected a ConfigError");
}

describe("source.helm", () => {
  it("fills Argo CD's defaults", () => {
    const config = parseConfig(
      "environments:\n  - name: dev\n    destination: {namespace: web}\n    source: {path: charts/web, helm: {}}\n",
    );
    assert.deepEqual(config.environments[0]?.source.helm, {
      valueFiles: [],
      ignoreMissingValueFiles: false,
      parameters: [],
      fileParameters: [],
      skipCrds: false,
      skipTests: false,
      passCredentials: false,
    });
  });

  it("names each wrong field", () => {
    const problems = problemsOf(
      [
        "releaseName: Web_App",
        "valueFiles: [../secrets.yaml, 'https://example.com/values.yaml']",
        "valuesObject: [1]",
        "parameters: [{name: image.tag, value: 2, forceSting: true}]",
        "fileParameters: [{name: cfg}]",
        "kubeVersion: latest",
        "apiVersions: ''",
        "passCredentials: 'no'",
        "postRenderer: kustomize",
      ].join("\n"),
    );
    const expected = [
      /environments\[0\]\.source\.helm\.releaseName: "Web_App" is not a valid Helm release name/,
      /environments\[0\]\.source\.helm\.valueFiles\[0\]: a value file must be a path in the repository/,
      /environments\[0\]\.source\.helm\.valueFiles\[1\]: a value file must be a path in the repository .* or a URL/,
      /environments\[0\]\.source\.helm\.valuesObject: must be a mapping/,
      /environments\[0\]\.source\.helm\.parameters\[0\]\.value: must be a string \(got 2\)/,
      /environments\[0\]\.source\.helm\.parameters\[0\]\.forceSting: unknown field \(did you mean "forceString"\?\)/,
      /environments\[0\]\.source\.helm\.fileParameters\[0\]\.path: required/,
      /environments\[0\]\.source\.helm\.kubeVersion: "latest" is not a Kubernetes version/,
      /environments\[0\]\.source\.helm\.apiVersions: must be a list/,
      /environments\[0\]\.source\.helm\.passCredentials: must be true or false/,
      /environments\[0\]\.source\.helm\.postRenderer: unknown field/,
    ];
    for (const re of expected)
      assert.ok(
        problems.some((p) => re.test(p)),
        `no problem matches ${re}:\n${problems.join("\n")}`,
      );
  });

  it("needs chart, repoURL and targetRevision together for a chart from a chart repository", () => {
    assert.throws(
      () =>
        parseConfig(
          "environments:\n  - name: dev\n    destination: {namespace: web}\n    source: {path: env, chart: redis, repoURL: 'ftp://x'}\n",
          FILE,
        ),
      (err: ConfigError) =>
        err.problems.some((p) =>
          /source\.repoURL: must be an http\(s\):\/\/ or oci:\/\/ chart repository URL/.test(p),
        ) && err.problems.some((p) => /source\.targetRevision: required with chart and repoURL/.test(p)),
    );
  });
});
