import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mergeKubeconfigs, parseKubeconfig, selectContext } from "../../../src/kube/kubeconfig-parse.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

const full = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority-data: ${b64("CA PEM")}
    tls-server-name: api.internal
    proxy-url: http://proxy.example:3128
- name: lab
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    client-certificate-data: ${b64("CERT PEM")}
    client-key-data: ${b64("KEY PEM")}
    as: alice
    as-groups: [admins, ops]
- name: lab-user
  user:
    client-certificate: pki/user.crt
    client-key: /abs/user.key
    tokenFile: token
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [--cluster, lab]
      env: [{name: REGION, value: eu}]
      interactiveMode: Never
      provideClusterInfo: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: shop}
- name: lab
  context: {cluster: lab, user: lab-user}
- name: lab-plugin
  context: {cluster: lab, user: plugin}
`;

describe("parseKubeconfig", () => {
  const doc = parseKubeconfig(full, "/home/me/.kube/config", "/home/me/.kube");

  it("reads clusters: server without trailing slash, CA data decoded, relative CA file made absolute", () => {
    assert.deepEqual(doc.clusters, [
      {
        name: "dev-cluster",
        server: "https://dev.example:6443",
        caData: "CA PEM",
        caFile: undefined,
        skipTLSVerify: false,
        tlsServerName: "api.internal",
        proxyUrl: "http://proxy.example:3128",
      },
      {
        name: "lab",
        server: "https://10.0.0.1:6443",
        caData: undefined,
        caFile: "/home/me/.kube/pki/ca.crt",
        skipTLSVerify: true,
        tlsServerName: undefined,
        proxyUrl: undefined,
      },
    ]);
  });

  it("reads users: inline and file credentials, impersonation, and an exec plugin with a relative command", () => {
    const [dev, lab, plugin] = doc.users;
    assert.equal(dev?.certData, "CERT PEM");
    assert.equal(dev?.keyData, "KEY PEM");
    assert.equal(dev?.impersonate, "alice");
    assert.deepEqual(dev?.impersonateGroups, ["admins", "ops"]);
    assert.equal(lab?.certFile, "/home/me/.kube/pki/user.crt");
    assert.equal(lab?.keyFile, "/abs/user.key");
    assert.equal(lab?.tokenFile, "/home/me/.kube/token");
    assert.deepEqual(plugin?.exec, {
      apiVersion: "client.authentication.k8s.io/v1",
      command: "/home/me/.kube/bin/get-token",
      args: ["--cluster", "lab"],
      env: [{ name: "REGION", value: "eu" }],
      interactiveMode: "Never",
      provideClusterInfo: true,
    });
  });

  it("selects the current context, or the one asked for, with its cluster and user", () => {
    const current = selectContext(doc, "cfg");
    assert.equal(current.context.namespace, "shop");
    assert.equal(current.cluster.name, "dev-cluster");
    assert.equal(current.user.name, "dev-user");
    const lab = selectContext(doc, "cfg", "lab-plugin");
    assert.equal(lab.cluster.name, "lab");
    assert.equal(lab.user.exec?.command, "/home/me/.kube/bin/get-token");
  });

  it("looks a bare exec command up on PATH (not relative to the file)", () => {
    const one = parseKubeconfig(
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws}}}]",
      "f",
      "/dir",
    );
    assert.equal(one.users[0]?.exec?.command, "aws");
    assert.equal(one.users[0]?.exec?.interactiveMode, "IfAvailable", "v1beta1 defaults the mode");
  });

  const errors: Array<[string, string, RegExp]> = [
    ["not YAML", "clusters: [", /f: not valid YAML/],
    ["a list that is a mapping", "clusters: {a: 1}", /f: clusters must be a list/],
    [
      "a cluster without a server",
      "clusters: [{name: c, cluster: {}}]",
      /f: clusters\[0\] \("c"\)\.cluster\.server is missing/,
    ],
    ["an entry without a name", "users: [{user: {token: x}}]", /f: users\[0\]\.name is missing/],
    [
      "a repeated name",
      "contexts: [{name: a, context: {cluster: c}}, {name: a, context: {cluster: d}}]",
      /contexts\[1\] \("a"\) repeats the name "a"/,
    ],
    [
      "a context without a cluster",
      "contexts: [{name: a, context: {user: u}}]",
      /contexts\[0\] \("a"\)\.context\.cluster is missing/,
    ],
    [
      "CA data that is not base64",
      "clusters: [{name: c, cluster: {server: https://x, certificate-authority-data: 'not base64!'}}]",
      /certificate-authority-data is not base64/,
    ],
    [
      "skip-verify that is not a boolean",
      "clusters: [{name: c, cluster: {server: https://x, insecure-skip-tls-verify: 'yes'}}]",
      /insecure-skip-tls-verify must be true or false/,
    ],
    [
      "an exec plugin of an unknown apiVersion",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}}]",
      /exec\.apiVersion "client\.authentication\.k8s\.io\/v1alpha1" is not supported/,
    ],
    [
      "a v1 exec plugin without interactiveMode",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}}]",
      /exec\.interactiveMode is missing \(required by client\.authentication\.k8s\.io\/v1/,
    ],
    [
      "an exec plugin without a command",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}}]",
      /users\[0\] \("u"\)\.user\.exec\.command is missing/,
    ],
    [
      "an unknown interactiveMode",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Sometimes}}}]",
      /interactiveMode must be one of Never, IfAvailable, Always/,
    ],
  ];
  for (const [what, text, message] of errors) {
    it(`refuses ${what}, naming the file and field`, () => {
      assert.throws(() => parseKubeconfig(text, "f"), message);
    });
  }

  it("reads an empty file as an empty kubeconfig", () => {
    assert.deepEqual(parseKubeconfig("", "f"), {
      clusters: [],
      users: [],
      contexts: [],
      currentContext: undefined,
    });
  });
});

describe("selectContext", () => {
  const doc = parseKubeconfig(
    `
clusters: [{name: c, cluster: {server: https://c}}]
users: [{name: old, user: {auth-provider: {name: gcp}}}]
contexts:
- {name: ok, context: {cluster: c}}
- {name: no-cluster, context: {cluster: gone}}
- {name: no-user, context: {cluster: c, user: gone}}
- {name: legacy, context: {cluster: c, user: old}}
`,
    "cfg",
  );
  const errors: Array<[string, string | undefined, RegExp]> = [
    ["no current-context and no --context", undefined, /cfg: no current-context: .*pass --context/],
    [
      "an unknown context, listing the known ones",
      "prod",
      /cfg: kubeconfig has no context named "prod" \(contexts: ok, no-cluster, no-user, legacy\)/,
    ],
    [
      "a context naming a missing cluster",
      "no-cluster",
      /context "no-cluster" names cluster "gone", which is not defined/,
    ],
    [
      "a context naming a missing user",
      "no-user",
      /context "no-user" names user "gone", which is not defined/,
    ],
    [
      "a legacy auth-provider, pointing to exec plugins",
      "legacy",
      /auth-provider "gcp", which syncward does not support: use an exec credential plugin/,
    ],
  ];
  for (const [what, name, message] of errors) {
    it(`refuses ${what}`, () => assert.throws(() => selectContext(doc, "cfg", name), message));
  }

  it("lets a context have no user (anonymous)", () => {
    assert.equal(selectContext(doc, "cfg", "ok").user.token, undefined);
  });
});

describe("mergeKubeconfigs (KUBECONFIG=a:b)", () => {
  it("keeps the first file's entry for a repeated name and the first current-context", () => {
    const a = parseKubeconfig(
      "clusters: [{name: c, cluster: {server: https://from-a}}]\ncontexts: [{name: x, context: {cluster: c}}]",
      "a",
    );
    const b = parseKubeconfig(
      "current-context: y\nclusters: [{name: c, cluster: {server: https://from-b}}, {name: d, cluster: {server: https://d}}]\ncontexts: [{name: y, context: {cluster: d}}]",
      "b",
    );
    const merged = mergeKubeconfigs([a, b]);
    assert.deepEqual(
      merged.clusters.map((c) => c.server),
      ["https://from-a", "https://d"],
    );
    assert.equal(merged.currentContext, "y", "a sets none, so b's applies");
    assert.equal(selectContext(merged, "KUBECONFIG").cluster.server, "https://d");
  });
});
