// kubeconfig `proxy-url`: every request and watch goes through the proxy it names (an HTTP
// CONNECT proxy on 127.0.0.1 here), with client certificates, exec credential plugins and
// --context working as without one. Without proxy-url nothing goes through it.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse, stringify } from "yaml";
import { KubeClient } from "../../src/kube/client.ts";
import { useCluster } from "../support/cluster.ts";

const cluster = useCluster();

interface Kubeconfig {
  clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
  users: Array<{ name: string; user: Record<string, unknown> }>;
  contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
  "current-context": string;
}

describe("kubeconfig proxy-url", () => {
  let proxy: Server;
  let proxyUrl: string;
  const tunnels: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "syncward-proxy-"));

  before(async () => {
    // A CONNECT proxy: it sees only host:port; TLS to the API server passes through untouched.
    proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on("connect", (req, client, head) => {
      tunnels.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host ?? "", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  after(() => {
    proxy.closeAllConnections();
    proxy.close();
  });

  /** The admin kubeconfig with a second context, `proxied`, whose cluster has proxy-url. */
  function withProxiedContext(source: string, user?: Record<string, unknown>): string {
    const kc = parse(readFileSync(source, "utf8")) as Kubeconfig;
    const [first] = kc.clusters;
    const [firstUser] = kc.users;
    assert.ok(first && firstUser);
    kc.clusters.push({ name: "proxied", cluster: { ...first.cluster, "proxy-url": proxyUrl } });
    kc.users.push({ name: "proxied-user", user: user ?? firstUser.user });
    kc.contexts.push({ name: "proxied", context: { cluster: "proxied", user: "proxied-user" } });
    const file = join(dir, `kubeconfig-${kc.contexts.length}-${tunnels.length}-${Math.random()}`);
    writeFileSync(file, stringify(kc));
    return file;
  }

  const apiHostPort = () => new URL(cluster.client.server).host;

  it("sends requests through the proxy for the context that names one, with client certificates", async () => {
    const ns = await cluster.namespace("proxy");
    await cluster.client.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "marker", namespace: ns },
      data: { via: "direct" },
    });
    const file = withProxiedContext(cluster.kubeconfig);

    const direct = KubeClient.fromKubeconfig({ kubeconfig: file });
    const before = tunnels.length;
    assert.equal(
      (await direct.list("v1", "ConfigMap", { namespace: ns })).items.some(
        (c) => c.metadata.name === "marker",
      ),
      true,
    );
    direct.close();
    assert.equal(tunnels.length, before, "the current context has no proxy-url: nothing through the proxy");

    const proxied = KubeClient.fromKubeconfig({ kubeconfig: file, context: "proxied" });
    const items = (await proxied.list("v1", "ConfigMap", { namespace: ns })).items;
    assert.equal(
      items.some((c) => c.metadata.name === "marker"),
      true,
    );
    await proxied.get("v1", "ConfigMap", ns, "marker");
    proxied.close();
    assert.ok(tunnels.length > before, "requests went through the proxy");
    assert.ok(
      tunnels.slice(before).every((t) => t === apiHostPort()),
      `tunnels to ${apiHostPort()}: ${tunnels}`,
    );
  });

  it("works with an exec credential plugin through the proxy", async () => {
    const ns = await cluster.namespace("proxy-exec");
    const sa = parse(readFileSync(cluster.syncwardKubeconfig, "utf8")) as Kubeconfig;
    const token = sa.users[0]?.user.token;
    assert.equal(typeof token, "string");
    const credential = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token },
    });
    const file = withProxiedContext(cluster.kubeconfig, {
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: ["-e", `process.stdout.write(${JSON.stringify(credential)})`],
        interactiveMode: "Never",
      },
    });
    const before = tunnels.length;
    const client = KubeClient.fromKubeconfig({ kubeconfig: file, context: "proxied" });
    // The ServiceAccount may create a ConfigMap here (deploy/'s RBAC): the token from the plugin is used.
    await client.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "through-proxy", namespace: ns },
      data: { a: "1" },
    });
    client.close();
    assert.ok(tunnels.length > before, "requests went through the proxy");
    const made = await cluster.client.get("v1", "ConfigMap", ns, "through-proxy");
    assert.equal((made as { data?: Record<string, string> }).data?.a, "1");
  });
});
