// Exec credential plugins run as real child processes (a small Node script) that count their runs.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ExecCredentials, execInfo, readExecCredential } from "../../../src/kube/exec-credential.ts";
import type { ExecConfig, KubeCluster } from "../../../src/kube/kubeconfig-parse.ts";

const V1 = "client.authentication.k8s.io/v1";
const cluster: KubeCluster = {
  name: "c",
  server: "https://api.example:6443",
  caData: "CA PEM",
  skipTLSVerify: false,
  tlsServerName: "api.internal",
};

function execConfig(overrides: Partial<ExecConfig> = {}): ExecConfig {
  return {
    apiVersion: V1,
    command: process.execPath,
    args: [],
    env: [],
    interactiveMode: "Never",
    provideClusterInfo: false,
    ...overrides,
  };
}

describe("readExecCredential", () => {
  const exec = execConfig();
  const credential = (status: unknown, more: Record<string, unknown> = {}) =>
    JSON.stringify({ apiVersion: V1, kind: "ExecCredential", status, ...more });

  const accepted: Array<[string, string, unknown]> = [
    ["a token", credential({ token: "t0k" }), { token: "t0k", cert: undefined, key: undefined }],
    [
      "a client certificate and key with an expiry",
      credential({
        clientCertificateData: "CERT",
        clientKeyData: "KEY",
        expirationTimestamp: "2030-01-02T03:04:05Z",
      }),
      { token: undefined, cert: "CERT", key: "KEY", expiresAt: Date.parse("2030-01-02T03:04:05Z") },
    ],
  ];
  for (const [what, out, expected] of accepted) {
    it(`accepts ${what}`, () => assert.deepEqual(readExecCredential(out, exec, "plugin"), expected));
  }

  const refused: Array<[string, string, RegExp]> = [
    ["output that is not JSON", "token: x", /plugin did not print an ExecCredential as JSON/],
    [
      "another kind",
      credential({ token: "x" }, { kind: "Secret" }),
      /printed kind "Secret", not ExecCredential/,
    ],
    [
      "another apiVersion than the kubeconfig asks for",
      credential({ token: "x" }, { apiVersion: "client.authentication.k8s.io/v1beta1" }),
      /printed apiVersion "client\.authentication\.k8s\.io\/v1beta1", but the kubeconfig asks for client\.authentication\.k8s\.io\/v1/,
    ],
    ["no credential", credential({}), /printed neither a token nor a client certificate/],
    [
      "a certificate without a key",
      credential({ clientCertificateData: "CERT" }),
      /clientCertificateData without clientKeyData/,
    ],
    [
      "an expiry that is not a time",
      credential({ token: "x", expirationTimestamp: "soon" }),
      /expirationTimestamp "soon", not an RFC 3339 time/,
    ],
  ];
  for (const [what, out, message] of refused) {
    it(`refuses ${what}`, () => assert.throws(() => readExecCredential(out, exec, "plugin"), message));
  }
});

describe("execInfo (KUBERNETES_EXEC_INFO)", () => {
  it("says the run is not interactive and carries the cluster only when provideClusterInfo is set", () => {
    assert.deepEqual(JSON.parse(execInfo(execConfig(), cluster)), {
      apiVersion: V1,
      kind: "ExecCredential",
      spec: { interactive: false },
    });
    assert.deepEqual(JSON.parse(execInfo(execConfig({ provideClusterInfo: true }), cluster)).spec.cluster, {
      server: "https://api.example:6443",
      "tls-server-name": "api.internal",
      "certificate-authority-data": Buffer.from("CA PEM").toString("base64"),
    });
  });
});

describe("ExecCredentials", () => {
  const dir = mkdtempSync(join(tmpdir(), "syncward-exec-"));
  /** A plugin that counts its runs in `counter` and prints a token valid until $EXPIRES (if set). */
  function plugin(name: string): { exec: ExecConfig; runs: () => number } {
    const counter = join(dir, `${name}.count`);
    writeFileSync(counter, "0");
    const script = join(dir, `${name}.mjs`);
    writeFileSync(
      script,
      `import { readFileSync, writeFileSync } from "node:fs";
const n = Number(readFileSync(${JSON.stringify(counter)}, "utf8")) + 1;
writeFileSync(${JSON.stringify(counter)}, String(n));
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
if (process.env.FAIL) { process.stderr.write("token service unavailable"); process.exit(3); }
const status = { token: "token-" + n + "-" + process.env.REGION + "-" + (info.spec.cluster?.server ?? "none") };
if (process.env.EXPIRES) status.expirationTimestamp = process.env.EXPIRES;
process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: "ExecCredential", status }));
`,
    );
    return {
      exec: execConfig({ args: [script], env: [{ name: "REGION", value: "eu" }] }),
      runs: () => Number(readFileSync(counter, "utf8")),
    };
  }

  it("runs the plugin once for concurrent requests and passes env and cluster info", async () => {
    const p = plugin("concurrent");
    const creds = new ExecCredentials({ ...p.exec, provideClusterInfo: true }, cluster, "u");
    const all = await Promise.all([creds.get(), creds.get(), creds.get()]);
    assert.deepEqual(
      all.map((c) => c.token),
      Array(3).fill("token-1-eu-https://api.example:6443"),
    );
    assert.equal(p.runs(), 1);
  });

  it("reuses the credential until its expirationTimestamp, then runs the plugin again", async () => {
    const p = plugin("expiring");
    let now = Date.parse("2030-01-01T00:00:00Z");
    const creds = new ExecCredentials(
      { ...p.exec, env: [...p.exec.env, { name: "EXPIRES", value: "2030-01-01T00:10:00Z" }] },
      cluster,
      "u",
      () => now,
    );
    assert.equal((await creds.get()).token, "token-1-eu-none");
    now += 9 * 60_000;
    assert.equal((await creds.get()).token, "token-1-eu-none", "still valid: cached");
    now += 2 * 60_000;
    assert.equal((await creds.get()).token, "token-2-eu-none", "expired: the plugin ran again");
    assert.equal(p.runs(), 2);
  });

  it("keeps a credential without expiry until the server refuses it (forget)", async () => {
    const p = plugin("forever");
    const creds = new ExecCredentials(p.exec, cluster, "u");
    await creds.get();
    await creds.get();
    assert.equal(p.runs(), 1);
    creds.forget();
    assert.equal((await creds.get()).token, "token-2-eu-none");
  });

  it("reports a failing plugin with its exit code and stderr, and tries again on the next request", async () => {
    const p = plugin("failing");
    const failing = new ExecCredentials(
      { ...p.exec, env: [...p.exec.env, { name: "FAIL", value: "1" }] },
      cluster,
      "ci-user",
    );
    await assert.rejects(
      failing.get(),
      /exec credential plugin ".*" \(kubeconfig user "ci-user"\) exited with code 3: token service unavailable/,
    );
    await assert.rejects(failing.get());
    assert.equal(p.runs(), 2, "a failure is not cached");
  });

  it("refuses a plugin that needs a terminal, and a command that does not exist", async () => {
    await assert.rejects(
      new ExecCredentials(execConfig({ interactiveMode: "Always" }), cluster, "u").get(),
      /needs a terminal \(interactiveMode: Always\).*set interactiveMode: Never/,
    );
    await assert.rejects(
      new ExecCredentials(execConfig({ command: join(dir, "no-such-plugin") }), cluster, "u").get(),
      /could not be started: spawn .*no-such-plugin ENOENT/,
    );
  });
});
