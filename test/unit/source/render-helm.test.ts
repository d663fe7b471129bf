// Helm sources with the real helm (no cluster): what is refused before helm runs, and helm's own errors
// turned into problems naming the chart file and line.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { parseConfig } from "../../../src/config/load.ts";
import type { HelmSource } from "../../../src/config/types.ts";
import { SourceError } from "../../../src/source/errors.ts";
import { HELM_VERSION } from "../../../src/source/helm-binary.ts";
import { credentialFor, parseCredentials, repositoryAllowed } from "../../../src/source/helm-repositories.ts";
import { render } from "../../../src/source/render.ts";
import { ensureHelm } from "../../support/helm.ts";
import { cleanup, type FileSpec, tempDir, writeTree } from "./helpers.ts";

ensureHelm();
const dirs: string[] = [];
after(() => cleanup(...dirs));

const CHART = {
  "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
  "app/values.yaml": "name: demo\n",
  "app/templates/cm.yaml":
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\ndata:\n  a: {{ .Values.a | default "x" | quote }}\n',
};

function tree(files: Record<string, FileSpec>): string {
  const dir = tempDir();
  dirs.push(dir);
  writeTree(dir, { ...CHART, ...files });
  return dir;
}

function settings(helm: Record<string, unknown>): HelmSource | undefined {
  const config = parseConfig(
    JSON.stringify({
      environments: [{ name: "dev", source: { path: "app", helm }, destination: { namespace: "n" } }],
    }),
  );
  return config.environments[0]?.source.helm;
}

async function problems(
  files: Record<string, FileSpec>,
  helm: Record<string, unknown> = {},
): Promise<string[]> {
  const err = await render(tree(files), "app", {
    helmContext: { releaseName: "r", namespace: "n", settings: settings(helm) },
    repositories: { allowed: [], credentials: [], cacheDir: tempDir() },
  }).catch((e) => e);
  assert.ok(err instanceof SourceError, `expected a SourceError, got ${String(err)}`);
  return err.message.split("\n");
}

const dataOf = async (helm: Record<string, unknown>, files: Record<string, FileSpec> = {}) => {
  const out = await render(tree(files), "app", {
    helmContext: { releaseName: "r", namespace: "n", settings: settings(helm) },
  });
  return (out.objects[0] as unknown as { data: Record<string, string> }).data;
};

describe("Helm rendering", () => {
  it("applies Argo CD's value order: value files, then values or valuesObject, then parameters", async () => {
    const files = { "app/a.yaml": "a: from-file\n", "env/b.yaml": "a: from-root-file\n" };
    assert.deepEqual(await dataOf({ valueFiles: ["a.yaml"] }, files), { a: "from-file" });
    assert.deepEqual(await dataOf({ valueFiles: ["a.yaml", "/env/b.yaml"] }, files), { a: "from-root-file" });
    assert.deepEqual(await dataOf({ valueFiles: ["a.yaml"], values: "a: inline\n" }, files), { a: "inline" });
    assert.deepEqual(await dataOf({ values: "a: inline\n", valuesObject: { a: "object" } }), { a: "object" });
    assert.deepEqual(
      await dataOf({ valuesObject: { a: "object" }, parameters: [{ name: "a", value: "p,q" }] }),
      {
        a: "p,q",
      },
    );
    assert.deepEqual(await dataOf({ parameters: [{ name: "a", value: "0012", forceString: true }] }), {
      a: "0012",
    });
    assert.deepEqual(await dataOf({ fileParameters: [{ name: "a", path: "/env/b.yaml" }] }, files), {
      a: "a: from-root-file\n",
    });
  });

  it("refuses a missing value file unless ignoreMissingValueFiles, naming the file", async () => {
    assert.deepEqual(await problems({}, { valueFiles: ["values-prod.yaml"] }), [
      "app/values-prod.yaml: source.helm.valueFiles[0] 'values-prod.yaml' does not exist at this revision (set ignoreMissingValueFiles: true to skip missing files)",
    ]);
    assert.deepEqual(await dataOf({ valueFiles: ["values-prod.yaml"], ignoreMissingValueFiles: true }), {
      a: "x",
    });
  });

  it("refuses value files and chart files that lead outside the repository", async () => {
    const found = await problems({ "app/templates/evil.yaml": { symlink: "/etc/passwd" } });
    assert.match(found[0] ?? "", /^app\/templates\/evil\.yaml: symlink points outside the repository/);
    const linked = await problems(
      { "app/linked.yaml": { symlink: "/etc/hostname" } },
      { valueFiles: ["linked.yaml"] },
    );
    assert.ok(
      linked.some((p) => /^app\/linked\.yaml: .*symlink points outside the repository/.test(p)),
      linked.join("\n"),
    );
  });

  it("names the values file and line of a YAML error in it", async () => {
    const found = await problems(
      { "app/values-dev.yaml": "a: ok\nb: [\n" },
      { valueFiles: ["values-dev.yaml"] },
    );
    assert.match(found[0] ?? "", /^app\/values-dev\.yaml:3: /);
  });

  it("names the template and line of a template error", async () => {
    const found = await problems({ "app/templates/bad.yaml": "a: 1\nb: {{ .Values.x.y.z }}\n" });
    assert.match(
      found[0] ?? "",
      /^app\/templates\/bad\.yaml:2: template: app\/templates\/bad\.yaml:2:.*nil pointer/,
    );
    const parse = await problems({ "app/templates/bad.yaml": "a: {{ .Values.x \n" });
    assert.match(parse[0] ?? "", /^app\/templates\/bad\.yaml:\d+: parse error/);
    const required = await problems({
      "app/templates/bad.yaml": 'x: {{ required "set x, please" .Values.x }}\n',
    });
    assert.match(required[0] ?? "", /^app\/templates\/bad\.yaml:1: .*set x, please/);
  });

  it("refuses a dependency that is not vendored and has no repository, naming Chart.yaml's line", async () => {
    const found = await problems({
      "app/Chart.yaml":
        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: db\n    version: 1.0.0\n",
    });
    assert.deepEqual(found, [
      "app/Chart.yaml:5: dependency 'db' is not in charts/: vendor it there (helm dependency build) and commit it",
    ]);
  });

  it("says so when source.helm is set on a path without Chart.yaml", async () => {
    const dir = tree({ "plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" });
    const err = await render(dir, "plain", {
      helmContext: { releaseName: "r", namespace: "n", settings: settings({}) },
    }).catch((e) => e);
    assert.match(String(err), /plain: source\.helm is set, but the path holds no Chart\.yaml/);
  });

  it("refuses a render or a chart file over the size limits", async () => {
    const big = await render(tree({}), "app", {
      helmContext: { releaseName: "r", namespace: "n" },
      limits: { maxRenderBytes: 64 },
    }).catch((e) => e);
    assert.match(
      String(big),
      /app\/Chart\.yaml: helm template of 'app' produced more than 64 bytes \(SYNCWARD_MAX_RENDER_BYTES\); refused/,
    );
    const file = await render(tree({ "app/values-big.yaml": `a: "${"x".repeat(200)}"\n` }), "app", {
      helmContext: { releaseName: "r", namespace: "n" },
      limits: { maxFileBytes: 150 },
    }).catch((e) => e);
    assert.match(String(file), /app\/values-big\.yaml: manifest file is 206 bytes; the limit is 150 bytes/);
  });

  it("counts the chart's objects against the object limit", async () => {
    const err = await render(tree({}), "app", {
      helmContext: { releaseName: "r", namespace: "n" },
      limits: { maxObjects: 0 },
    }).catch((e) => e);
    assert.match(String(err), /the render produced 1 objects; the limit is 0/);
  });
});

describe("chart repository access", () => {
  it("allows a repository by URL prefix at a path boundary", () => {
    const allowed = ["https://charts.example.com/stable/", "oci://ghcr.io/org"];
    assert.equal(repositoryAllowed("https://charts.example.com/stable", allowed), true);
    assert.equal(repositoryAllowed("https://charts.example.com/stable/sub", allowed), true);
    assert.equal(repositoryAllowed("https://charts.example.com/stablex", allowed), false);
    assert.equal(repositoryAllowed("oci://ghcr.io/org/charts", allowed), true);
    assert.equal(repositoryAllowed("https://evil.example.com/stable", allowed), false);
    assert.equal(repositoryAllowed("https://charts.example.com/stable", []), false);
  });

  it("picks the most specific credential and refuses malformed credentials without echoing them", () => {
    const creds = parseCredentials(
      "- {url: 'https://c.example.com', username: a, password: p1}\n- {url: 'https://c.example.com/team', username: b, password: p2}\n",
      "file",
    );
    assert.equal(credentialFor("https://c.example.com/team/charts", creds)?.username, "b");
    assert.equal(credentialFor("https://c.example.com/other", creds)?.username, "a");
    assert.equal(credentialFor("https://d.example.com", creds), undefined);
    assert.throws(() => parseCredentials("- {url: x, username: u}\n", "SYNCWARD_HELM_CREDENTIALS"), {
      message: "SYNCWARD_HELM_CREDENTIALS: entry 1 needs url, username and password (strings)",
    });
    assert.throws(
      () => parseCredentials("password: hunter2\n", "f"),
      (e: Error) => !e.message.includes("hunter2"),
    );
  });

  it("HELM_VERSION is the version tools/cluster/build.sh builds", () => {
    const env = readFileSync("tools/cluster/versions.env", "utf8");
    assert.equal(/HELM_VERSION=\$\{HELM_VERSION:-(v[\d.]+)\}/.exec(env)?.[1], HELM_VERSION);
  });
});
