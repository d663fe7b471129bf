// Where a kubeconfig comes from and what each request carries, with real files in a temp dir.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { findKubeconfig, Kubeconfig } from "../../../src/kube/kubeconfig.ts";
import { selfSigned } from "../../support/self-signed.ts";

const fresh = () => mkdtempSync(join(tmpdir(), "syncward-kubeconfig-"));

const fromFile = selfSigned("from-file");
const inline = selfSigned("inline");
const plugin = selfSigned("plugin");

function kubeconfig(
  server: string,
  user: Record<string, unknown> = { token: "t" },
  context = "main",
): string {
  return JSON.stringify({
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user }],
    contexts: [{ name: context, context: { cluster: "c", user: "u" } }],
    "current-context": context,
  });
}

/** A service account directory as the kubelet mounts it. */
function serviceAccount(token: string): string {
  const dir = fresh();
  writeFileSync(join(dir, "token"), token);
  writeFileSync(join(dir, "ca.crt"), fromFile.cert);
  writeFileSync(join(dir, "namespace"), "syncward\n");
  return dir;
}

describe("findKubeconfig: kubectl's order of sources", () => {
  const dir = fresh();
  const explicit = join(dir, "explicit");
  const a = join(dir, "a");
  const b = join(dir, "b");
  writeFileSync(explicit, kubeconfig("https://explicit"));
  writeFileSync(a, kubeconfig("https://a", { token: "t" }, "ctx-a"));
  writeFileSync(b, kubeconfig("https://b", { token: "t" }, "ctx-b"));
  const home = fresh();
  mkdirSync(join(home, ".kube"));
  writeFileSync(join(home, ".kube", "config"), kubeconfig("https://home"));
  const emptyHome = fresh();
  const sa = serviceAccount("sa-token");
  const pod = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

  const cases: Array<[string, Parameters<typeof findKubeconfig>[0], string]> = [
    ["--kubeconfig over KUBECONFIG", { file: explicit, env: { KUBECONFIG: a } }, "https://explicit"],
    ["KUBECONFIG over ~/.kube/config", { env: { KUBECONFIG: a }, home }, "https://a"],
    [
      "KUBECONFIG skips a listed file that does not exist",
      { env: { KUBECONFIG: `${join(dir, "gone")}:${b}` }, home },
      "https://b",
    ],
    ["~/.kube/config over the service account", { env: pod, home, serviceAccountDir: sa }, "https://home"],
    [
      "the service account inside a Pod",
      { env: pod, home: emptyHome, serviceAccountDir: sa },
      "https://10.96.0.1:443",
    ],
  ];
  for (const [what, sources, server] of cases) {
    it(what, () => {
      const { doc } = findKubeconfig(sources);
      const current = doc.contexts.find((c) => c.name === doc.currentContext);
      assert.equal(doc.clusters.find((c) => c.name === current?.cluster)?.server, server);
    });
  }

  it("merges KUBECONFIG files: contexts from both, the first current-context", () => {
    const kc = Kubeconfig.load({ env: { KUBECONFIG: `${a}:${b}` }, context: "ctx-b" });
    assert.equal(kc.context.name, "ctx-b");
    assert.equal(Kubeconfig.load({ env: { KUBECONFIG: `${a}:${b}` } }).context.name, "ctx-a");
  });

  it("says what to do when there is no kubeconfig at all", () => {
    assert.throws(
      () => findKubeconfig({ env: {}, home: emptyHome, serviceAccountDir: join(emptyHome, "none") }),
      /no kubeconfig: pass --kubeconfig, set KUBECONFIG, create .*\.kube\/config, or run in a Pod/,
    );
    assert.throws(
      () => findKubeconfig({ env: { KUBECONFIG: join(dir, "gone") } }),
      /KUBECONFIG names no existing file/,
    );
  });

  it("names the file of a broken kubeconfig", () => {
    const broken = join(dir, "broken");
    writeFileSync(broken, "clusters: [{name: c, cluster: {}}]");
    assert.throws(
      () => Kubeconfig.load({ file: broken }),
      (err: Error) => err.message.startsWith(`${broken}: clusters[0] ("c").cluster.server is missing`),
    );
  });
});

describe("in-cluster config", () => {
  it("uses the service account's CA and namespace, brackets an IPv6 host, and re-reads the token", async () => {
    const sa = serviceAccount("first-token");
    const kc = Kubeconfig.load({
      env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
      home: fresh(),
      serviceAccountDir: sa,
    });
    assert.equal(kc.cluster.server, "https://[fd00::1]:443");
    assert.equal(kc.context.namespace, "syncward");
    const first = (await kc.authOptions()).options;
    assert.equal(first.ca, fromFile.cert);
    assert.equal(first.headers?.Authorization, "Bearer first-token");
    // The kubelet rotates the projected token in place.
    writeFileSync(join(sa, "token"), "rotated-token\n");
    assert.equal((await kc.authOptions()).options.headers?.Authorization, "Bearer rotated-token");
  });
});

describe("Kubeconfig.authOptions", () => {
  const dir = fresh();
  writeFileSync(join(dir, "ca.crt"), fromFile.cert);
  writeFileSync(join(dir, "user.crt"), fromFile.cert);
  writeFileSync(join(dir, "user.key"), fromFile.key);
  writeFileSync(join(dir, "token"), "token-from-file\n");

  function load(cluster: Record<string, unknown>, user: Record<string, unknown>): Kubeconfig {
    const file = join(dir, `kubeconfig-${Math.random()}`);
    writeFileSync(
      file,
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://api:6443", ...cluster } }],
        users: [{ name: "u", user }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    return Kubeconfig.load({ file });
  }

  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "files relative to the kubeconfig: CA, client certificate and key",
      { "certificate-authority": "ca.crt" },
      { "client-certificate": "user.crt", "client-key": "user.key" },
      { ca: fromFile.cert, cert: fromFile.cert, key: fromFile.key, headers: {} },
    ],
    [
      "inline data, skip-verify and a TLS server name",
      {
        "certificate-authority-data": b64(inline.cert),
        "insecure-skip-tls-verify": true,
        "tls-server-name": "api.internal",
      },
      { "client-certificate-data": b64(inline.cert), "client-key-data": b64(inline.key) },
      {
        ca: inline.cert,
        cert: inline.cert,
        key: inline.key,
        rejectUnauthorized: false,
        servername: "api.internal",
        headers: {},
      },
    ],
    ["a static token", {}, { token: "abc" }, { headers: { Authorization: "Bearer abc" } }],
    [
      "a token file, trimmed",
      {},
      { tokenFile: "token" },
      { headers: { Authorization: "Bearer token-from-file" } },
    ],
    [
      "a static token over a token file",
      {},
      { token: "abc", tokenFile: "token" },
      { headers: { Authorization: "Bearer abc" } },
    ],
    [
      "a username and password",
      {},
      { username: "admin", password: "pw" },
      { headers: { Authorization: `Basic ${b64("admin:pw")}` } },
    ],
    [
      "impersonation from as and as-groups",
      {},
      { token: "abc", as: "alice", "as-groups": ["ops", "dev"] },
      {
        headers: {
          Authorization: "Bearer abc",
          "Impersonate-User": "alice",
          "Impersonate-Group": ["ops", "dev"],
        },
      },
    ],
  ];
  for (const [what, cluster, user, expected] of cases) {
    it(what, async () => {
      const { options, expiresAt } = await load(cluster, user).authOptions();
      const { secureContext, ...rest } = options;
      assert.ok(secureContext, "one TLS context for every connection");
      assert.deepEqual(rest, expected);
      assert.equal(expiresAt, undefined);
    });
  }

  it("takes an exec plugin's token and client certificate over the kubeconfig's, with its expiry", async () => {
    const status = {
      token: "from-plugin",
      clientCertificateData: plugin.cert,
      clientKeyData: plugin.key,
      expirationTimestamp: "2031-05-06T07:08:09Z",
    };
    const out = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      status,
    });
    const kc = load(
      {},
      {
        "client-certificate": "user.crt",
        "client-key": "user.key",
        exec: {
          apiVersion: "client.authentication.k8s.io/v1beta1",
          command: process.execPath,
          args: ["-e", `process.stdout.write(${JSON.stringify(out)})`],
        },
      },
    );
    const { options, expiresAt } = await kc.authOptions();
    assert.equal(options.cert, plugin.cert);
    assert.equal(options.key, plugin.key);
    assert.equal(options.headers?.Authorization, "Bearer from-plugin");
    assert.equal(expiresAt, Date.parse("2031-05-06T07:08:09Z"));
  });

  it("keeps one TLS context while the certificates stay, and makes a new one when a file changes", async () => {
    const files = fresh();
    writeFileSync(join(files, "ca.crt"), fromFile.cert);
    const kc = load({ "certificate-authority": join(files, "ca.crt") }, { token: "t" });
    const first = (await kc.authOptions()).options.secureContext;
    assert.equal((await kc.authOptions()).options.secureContext, first);
    writeFileSync(join(files, "ca.crt"), inline.cert); // the CA rotated
    const rotated = (await kc.authOptions()).options;
    assert.notEqual(rotated.secureContext, first);
    assert.equal(rotated.ca, inline.cert);
  });

  it("says which context's client key cannot be used", async () => {
    const kc = load({}, { "client-certificate-data": b64(inline.cert), "client-key-data": b64("not a key") });
    await assert.rejects(
      kc.authOptions(),
      /the certificate authority or client certificate of context "x" cannot be used/,
    );
  });

  it("refuses a proxy-url it cannot use, naming the cluster", () => {
    assert.throws(
      () => load({ "proxy-url": "ftp://proxy:21" }, {}),
      /cluster "c": proxy-url scheme "ftp:" is not supported/,
    );
  });
});
