// `syncward health` through a captured CliIO, over the files in test/fixtures/health/command.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { healthCommand } from "../../../src/cli/commands/health.ts";
import { EXIT } from "../../../src/cli/io.ts";
import { FIXTURES } from "./fixtures.ts";

const dir = join(FIXTURES, "command");
const file = (name: string) => join(dir, name);

async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await healthCommand(argv, { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false });
  return { code, out, err };
}

const USAGE = "usage: syncward health [--health-config FILE] [-o json] FILE...";

describe("syncward health", () => {
  test("multi-document file: one line per object, '-' for kinds without health, empty documents skipped", async () => {
    const r = await run([file("app.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(r.err, []);
    assert.deepEqual(r.out, [
      "Deployment/web: Progressing Waiting for rollout to finish: 1 of 3 updated replicas are available...",
      "Service/web: Healthy",
      "ConfigMap/web-config: -",
    ]);
  });

  test("kind: List is expanded into its items; a multi-line message stays on one line", async () => {
    const r = await run([file("list.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(r.out, [
      "Namespace/shop: Healthy",
      'Pod/web-5c8f7d9b44-x2k9p: Degraded container "web" is in CrashLoopBackOff: back-off 2m40s restarting failed container=web pod=web-5c8f7d9b44-x2k9p_shop',
      "HorizontalPodAutoscaler/web: Progressing Waiting to Autoscale",
    ]);
  });

  test("a typed list (DeploymentList) lends its kind and apiVersion to items without one", async () => {
    const r = await run([file("typed-list.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(r.out, ["Deployment/api: Suspended Deployment is paused", "Deployment/worker: Healthy"]);
  });

  test("several files are reported in order; an empty file adds nothing", async () => {
    const r = await run([file("typed-list.yaml"), file("empty.yaml"), file("app.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(
      r.out.map((line) => line.split(":")[0]),
      ["Deployment/api", "Deployment/worker", "Deployment/web", "Service/web", "ConfigMap/web-config"],
    );
  });

  test("-o json prints an array of {kind, name, namespace, status, message}", async () => {
    const r = await run(["-o", "json", file("app.yaml"), file("list.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.equal(r.out.length, 1);
    assert.deepEqual(JSON.parse(r.out[0] ?? ""), [
      {
        kind: "Deployment",
        name: "web",
        namespace: "shop",
        status: "Progressing",
        message: "Waiting for rollout to finish: 1 of 3 updated replicas are available...",
      },
      { kind: "Service", name: "web", namespace: "shop", status: "Healthy", message: null },
      { kind: "ConfigMap", name: "web-config", namespace: "shop", status: null, message: null },
      { kind: "Namespace", name: "shop", namespace: null, status: "Healthy", message: null },
      {
        kind: "Pod",
        name: "web-5c8f7d9b44-x2k9p",
        namespace: "shop",
        status: "Degraded",
        message:
          'container "web" is in CrashLoopBackOff: back-off 2m40s restarting failed container=web\npod=web-5c8f7d9b44-x2k9p_shop',
      },
      {
        kind: "HorizontalPodAutoscaler",
        name: "web",
        namespace: "shop",
        status: "Progressing",
        message: "Waiting to Autoscale",
      },
    ]);
  });

  for (const form of [["--output", "json"], ["-o=json"], ["-ojson"], ["--output=json"]]) {
    test(`${form.join(" ")} selects JSON too`, async () => {
      const r = await run([...form, file("typed-list.yaml")]);
      assert.equal(r.code, EXIT.ok);
      assert.equal((JSON.parse(r.out[0] ?? "") as unknown[]).length, 2);
    });
  }

  test("-o json with nothing to report prints an empty array", async () => {
    const r = await run(["-o", "json", file("empty.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(JSON.parse(r.out[0] ?? ""), []);
  });

  test("unparsable YAML: FILE:LINE: problem on stderr, nothing on stdout, exit 2", async () => {
    const r = await run([file("app.yaml"), file("broken.yaml")]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.out, []);
    assert.deepEqual(r.err, [
      `${file("broken.yaml")}:11: Flow map in block collection must be sufficiently indented and end with a }`,
    ]);
  });

  test("duplicate keys are a parse error with the line of the duplicate", async () => {
    const r = await run([file("duplicate-key.yaml")]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.err, [`${file("duplicate-key.yaml")}:5: Map keys must be unique`]);
  });

  test("evil: an alias bomb is refused quickly, not expanded", async () => {
    const started = Date.now();
    const r = await run([file("evil.yaml")]);
    assert.ok(Date.now() - started < 2000, "took too long");
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.out, []);
    assert.equal(r.err.length, 1);
    assert.match(r.err[0] ?? "", /evil\.yaml:2: Excessive alias count/);
  });

  test("documents and list items that are not objects are reported with their line", async () => {
    const r = await run([file("not-objects.yaml")]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.out, []);
    assert.deepEqual(r.err, [
      `${file("not-objects.yaml")}:6: not a Kubernetes object (expected a mapping with apiVersion, kind and metadata)`,
      `${file("not-objects.yaml")}:15: items[1]: Secret has no metadata.name`,
    ]);
  });

  test("a missing file is one clear line and exit 2", async () => {
    const missing = file("no-such-file.yaml");
    const r = await run([file("app.yaml"), missing]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.out, []);
    assert.deepEqual(r.err, [`syncward health: cannot read ${missing}: no such file`]);
  });

  test("a directory is not a file", async () => {
    const r = await run([dir]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.err, [`syncward health: cannot read ${dir}: is a directory`]);
  });

  const usageErrors: Array<{ argv: string[]; problem: string }> = [
    { argv: [], problem: "no files given" },
    { argv: ["-o", "json"], problem: "no files given" },
    { argv: ["-o"], problem: "-o needs a value (json or text)" },
    { argv: ["-o", "yaml", "x.yaml"], problem: 'unsupported output format "yaml" (use json or text)' },
    { argv: ["--watch", "x.yaml"], problem: "unknown option --watch" },
  ];
  for (const u of usageErrors) {
    test(`usage error: ${JSON.stringify(u.argv)}`, async () => {
      const r = await run(u.argv);
      assert.equal(r.code, EXIT.error);
      assert.deepEqual(r.out, []);
      assert.deepEqual(r.err, [`syncward health: ${u.problem}`, USAGE]);
    });
  }

  test("-- ends options, so a file may start with a dash", async () => {
    const r = await run(["--", "-o"]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.err, ["syncward health: cannot read -o: no such file"]);
  });

  test("--help prints the usage on stdout", async () => {
    const r = await run(["--help"]);
    assert.equal(r.code, EXIT.ok);
    assert.deepEqual(r.out, [USAGE]);
    assert.deepEqual(r.err, []);
  });
  test("--health-config applies the operator's Lua checks; without it the built-in rules answer", async () => {
    const cert = join(FIXTURES, "certificate-issuance-failed.yaml");
    const issuing = join(FIXTURES, "certificate-issuing.yaml");
    const builtIn = await run([cert, issuing]);
    assert.deepEqual(builtIn.out, [
      'Certificate/shop-tls: Degraded Issuing: Failed: The certificate request has failed to complete and will be retried: Failed to wait for order resource "shop-tls-1-3412" to become ready: order is in "invalid" state',
      "Certificate/shop-tls: Progressing Issuing certificate as Secret does not exist",
    ]);
    const custom = await run(["--health-config", file("health-lua.yml"), "-o", "json", cert, issuing]);
    assert.equal(custom.code, EXIT.ok);
    assert.deepEqual(
      JSON.parse(custom.out.join("\n")).map((r: { status: string; message: string }) => [
        r.status,
        r.message,
      ]),
      [
        ["Degraded", "custom: not issuing"],
        ["Progressing", "custom: issuing"],
      ],
    );
  });

  test("--health-config with a script that does not compile fails before reading objects, naming file and line", async () => {
    const r = await run([`--health-config=${file("health-bad-lua.yml")}`, file("app.yaml")]);
    assert.equal(r.code, EXIT.error);
    assert.deepEqual(r.out, []);
    assert.equal(r.err.length, 1);
    assert.match(
      r.err[0] ?? "",
      /health-bad-lua\.yml: resourceCustomizations\["cert-manager.io\/Certificate"\]\["health.lua"\]: Lua does not compile \(line 2 of the script\): '}' expected \(to close '{' at line 1\) near <eof>/,
    );
  });
});
