import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { KubeClient } from "../../../src/kube/client.ts";
import { entriesOf } from "../../../src/kube/cluster-registry.ts";
import {
  ClusterSecretError,
  clusterFromSecret,
  clusterSecretFor,
  clusterSecretFromArgo,
} from "../../../src/kube/cluster-secret.ts";
import { Clusters, destinationKey, UnknownDestinationError } from "../../../src/kube/clusters.ts";
import type { KubeconfigDoc } from "../../../src/kube/kubeconfig-parse.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const secret = (name: string, data: Record<string, string>, rv = "1"): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: "syncward",
      resourceVersion: rv,
      labels: { "syncward.dev/secret-type": "cluster" },
    },
    stringData: data,
  }) as KubeObject;

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("cluster Secrets", () => {
  it("reads Argo CD's layout: server, bearer token, CA, TLS server name", () => {
    const e = clusterFromSecret(
      secret("cluster-prod", {
        name: "prod",
        server: "https://prod.example:6443",
        config: JSON.stringify({
          bearerToken: "t0k",
          tlsClientConfig: { caData: b64("CA PEM"), serverName: "kube" },
        }),
      }),
    );
    assert.equal(e.name, "prod");
    assert.equal(e.selection.cluster.server, "https://prod.example:6443");
    assert.equal(e.selection.cluster.caData, "CA PEM");
    assert.equal(e.selection.cluster.tlsServerName, "kube");
    assert.equal(e.selection.user.token, "t0k");
  });

  it("reads a client certificate and an exec credential", () => {
    const e = clusterFromSecret(
      secret("c", {
        name: "eks",
        server: "https://eks.example",
        config: JSON.stringify({
          tlsClientConfig: { certData: b64("CERT"), keyData: b64("KEY") },
          execProviderConfig: {
            command: "aws",
            args: ["eks", "get-token"],
            env: { AWS_PROFILE: "x" },
            apiVersion: "client.authentication.k8s.io/v1beta1",
          },
        }),
      }),
    );
    assert.equal(e.selection.user.certData, "CERT");
    assert.equal(e.selection.user.exec?.command, "aws");
    assert.deepEqual(e.selection.user.exec?.env, [{ name: "AWS_PROFILE", value: "x" }]);
  });

  const bad: Array<[string, Record<string, string>, RegExp]> = [
    ["no server", { name: "x" }, /cluster Secret syncward\/s: data.server is missing/],
    ["a server that is no URL", { server: "prod:6443" }, /data.server is not an http\(s\) URL/],
    [
      "a certificate without its key",
      { server: "https://a", config: JSON.stringify({ tlsClientConfig: { certData: "QQ==" } }) },
      /needs both certData and keyData/,
    ],
    ["a config that is an array", { server: "https://a", config: "[]" }, /data.config must be a JSON object/],
  ];
  for (const [what, data, message] of bad)
    it(`refuses ${what}, naming the Secret and the key`, () => {
      assert.throws(() => clusterFromSecret(secret("s", data)), message);
    });

  it("never repeats a credential in its error (hostile Secret)", () => {
    const evil = parse(
      readFileSync(
        join(import.meta.dirname, "..", "..", "fixtures", "clusters", "evil-cluster-secret.yaml"),
        "utf8",
      ),
    ) as KubeObject;
    assert.throws(
      () => clusterFromSecret(evil),
      (err: Error) =>
        err instanceof ClusterSecretError &&
        !err.message.includes("SUPERSECRET") &&
        /data.config is not valid JSON/.test(err.message),
    );
    const entry = entriesOf([evil]).get("evil");
    assert.ok(entry && "error" in entry && !entry.error.includes("SUPERSECRET"));
  });

  it("round-trips a kubeconfig context through the Secret `cluster add` writes", () => {
    const made = clusterSecretFor("dev", "syncward", {
      cluster: { name: "c", server: "https://dev:6443", caData: "CA", skipTLSVerify: false },
      user: { name: "u", token: "abc", impersonateGroups: [] },
    });
    assert.equal(made.metadata.name, "cluster-dev");
    const back = clusterFromSecret({ ...made, metadata: { ...made.metadata, resourceVersion: "5" } });
    assert.equal(back.selection.cluster.caData, "CA");
    assert.equal(back.selection.user.token, "abc");
  });

  it("imports an Argo CD cluster Secret under syncward's label, and refuses anything else", () => {
    const argo = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "mycluster", labels: { "argocd.argoproj.io/secret-type": "cluster" } },
      data: { name: b64("prod"), server: b64("https://prod:6443"), config: b64('{"bearerToken":"x"}') },
    } as unknown as KubeObject;
    const ours = clusterSecretFromArgo(argo, "syncward");
    assert.equal(ours.metadata.labels?.["syncward.dev/secret-type"], "cluster");
    assert.equal(ours.stringData.name, "prod");
    assert.throws(
      () => clusterSecretFromArgo({ ...argo, metadata: { name: "x" } }, "syncward"),
      /not an Argo CD cluster Secret/,
    );
  });
});

describe("how a destination resolves", () => {
  const doc: KubeconfigDoc = {
    clusters: [{ name: "k", server: "https://127.0.0.1:1", skipTLSVerify: true }],
    users: [{ name: "u", token: "t", impersonateGroups: [] }],
    contexts: [
      { name: "own", cluster: "k", user: "u" },
      { name: "other", cluster: "k", user: "u" },
    ],
    currentContext: "own",
  };
  const own = KubeClient.fromSelection(
    { context: doc.contexts[0] as never, cluster: doc.clusters[0] as never, user: doc.users[0] as never },
    "test",
  );
  const registry = {
    entries: entriesOf([
      secret("cluster-prod", { name: "prod", server: "https://10.1.1.1:6443", config: "{}" }),
      secret("cluster-broken", { name: "broken" }),
    ]),
    onChange: () => () => undefined,
  } as never;
  const clusters = new Clusters({ own, registry, kubeconfig: { doc, source: "test" } });

  it("keys: none, inCluster, a name under either field", () => {
    assert.equal(destinationKey({}), undefined);
    assert.equal(destinationKey({ inCluster: true }), "in-cluster");
    assert.equal(destinationKey({ cluster: "a" }), "a");
    assert.equal(destinationKey({ context: "b" }), "b");
  });

  it("no name: syncward's own client; its own context's name: the same client", () => {
    assert.equal(clusters.clientFor({}), own);
    assert.equal(clusters.clientFor({ context: "own" }), own);
  });

  it("a registry cluster and another context each get one client of their own, reused", () => {
    const prod = clusters.clientFor({ cluster: "prod" });
    assert.equal(prod.server.origin, "https://10.1.1.1:6443");
    assert.equal(clusters.clientFor({ context: "prod" }), prod);
    const other = clusters.clientFor({ context: "other" });
    assert.notEqual(other, own);
    assert.equal(clusters.clientFor({ cluster: "other" }), other);
  });

  it("an unknown name fails with the destination and every cluster that exists", () => {
    assert.throws(
      () => clusters.clientFor({ cluster: "staging" }),
      (err: Error) =>
        err instanceof UnknownDestinationError &&
        err.message ===
          'destination cluster "staging" is not a cluster syncward knows: the clusters are broken (registry), prod (registry), other (kubeconfig context), own (kubeconfig context). Register it (syncward cluster add staging) or name one of these in destination.cluster.',
    );
  });

  it("a registry Secret that cannot be read fails the environments naming it", () => {
    assert.throws(
      () => clusters.clientFor({ cluster: "broken" }),
      /destination cluster "broken": cluster Secret syncward\/cluster-broken: data.server is missing/,
    );
  });

  it("inCluster outside a Pod fails as an unknown destination", () => {
    const c = new Clusters({ own, env: {} });
    assert.throws(() => c.clientFor({ inCluster: true }), UnknownDestinationError);
    clusters.close();
    own.close();
  });
});

describe("a cluster Secret's proxy URL", () => {
  it("is checked without being quoted (it may carry a password)", () => {
    assert.throws(
      () =>
        clusterFromSecret(
          secret("p", {
            server: "https://a",
            config: JSON.stringify({ proxyUrl: "ftp://user:pa55word@proxy" }),
          }),
        ),
      (err: Error) =>
        /config.proxyUrl is not an http, https or socks5 URL/.test(err.message) &&
        !err.message.includes("pa55word"),
    );
  });
});
