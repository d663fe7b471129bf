// kubeconfig `proxy-url`: every request and watch goes through the proxy it names (an HTTP
// CONNECT proxy on 127.0.0.1 here), with client certificates, exec credential plugins and
// --context working as without one. Without proxy-url nothing goes through it.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
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
      // `kubernetes` (a name the API server's certificate holds) resolves only here, at the proxy:
      // a client that reaches the API server under that name went through the proxy.
      const upstream = connect(Number(port), host === "kubernetes" ? "127.0.0.1" : (host ?? ""), () => {
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
  function withProxiedContext(source: string, user?: Record<string, unknown>, via = proxyUrl): string {
    const kc = parse(readFileSync(source, "utf8")) as Kubeconfig;
    const [first] = kc.clusters;
    const [firstUser] = kc.users;
    assert.ok(first && firstUser);
    kc.clusters.push({ name: "proxied", cluster: { ...first.cluster, "proxy-url": via } });
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

  it("tunnels through a SOCKS5 proxy with a username and password", async () => {
    // A SOCKS5 server (RFC 1928, username/password per RFC 1929) that records each CONNECT target.
    const targets: string[] = [];
    const socks: TcpServer = createTcpServer((client: Socket) => {
      client.once("data", (hello: Buffer) => {
        assert.equal(hello[0], 5);
        assert.ok([...hello.subarray(2)].includes(2), "offers username/password");
        client.write(Buffer.from([5, 2]));
        client.once("data", (auth: Buffer) => {
          const user = auth.subarray(2, 2 + (auth[1] ?? 0)).toString();
          const passAt = 2 + (auth[1] ?? 0);
          const pass = auth.subarray(passAt + 1, passAt + 1 + (auth[passAt] ?? 0)).toString();
          const ok = user === "kube" && pass === "p@ss";
          client.write(Buffer.from([1, ok ? 0 : 1]));
          if (!ok) return client.end();
          client.once("data", (req: Buffer) => {
            const host = req.subarray(5, 5 + (req[4] ?? 0)).toString();
            const port = req.readUInt16BE(5 + (req[4] ?? 0));
            targets.push(`${host}:${port}`);
            const upstream = connect(port, host, () => {
              client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
              upstream.pipe(client);
              client.pipe(upstream);
            });
            upstream.on("error", () => client.destroy());
            client.on("error", () => upstream.destroy());
          });
        });
      });
    });
    await new Promise<void>((resolve) => socks.listen(0, "127.0.0.1", resolve));
    try {
      const port = (socks.address() as AddressInfo).port;
      const ns = await cluster.namespace("proxy-socks");
      const file = withProxiedContext(
        cluster.kubeconfig,
        undefined,
        `socks5://kube:p%40ss@127.0.0.1:${port}`,
      );
      const client = KubeClient.fromKubeconfig({ kubeconfig: file, context: "proxied" });
      await client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "via-socks", namespace: ns },
      });
      client.close();
      assert.ok(targets.length > 0 && targets.every((t) => t === apiHostPort()), `targets: ${targets}`);
      assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "via-socks"));

      const refused = KubeClient.fromKubeconfig({
        kubeconfig: withProxiedContext(
          cluster.kubeconfig,
          undefined,
          `socks5://kube:wrong@127.0.0.1:${port}`,
        ),
        context: "proxied",
      });
      await assert.rejects(refused.ping(), /SOCKS5 proxy 127\.0\.0\.1:\d+ refused the username and password/);
      refused.close();
    } finally {
      socks.close();
    }
  });

  /** The admin kubeconfig with its server named `kubernetes`: reachable only through the proxy. */
  function underProxyOnlyName(extra: Record<string, unknown> = {}): string {
    const kc = parse(readFileSync(cluster.kubeconfig, "utf8")) as Kubeconfig;
    for (const c of kc.clusters) {
      const server = new URL(String(c.cluster.server));
      server.hostname = "kubernetes";
      c.cluster = { ...c.cluster, server: server.origin, ...extra };
    }
    const file = join(dir, `kubeconfig-env-${Math.random()}`);
    writeFileSync(file, stringify(kc));
    return file;
  }
  const port = () => new URL(cluster.client.server).port;

  it("honours HTTPS_PROXY from the environment, as kubectl does", async () => {
    const before = tunnels.length;
    const client = KubeClient.fromKubeconfig({
      kubeconfig: underProxyOnlyName(),
      env: { HTTPS_PROXY: proxyUrl },
    });
    const ns = await cluster.namespace("proxy-env");
    await client.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "via-env", namespace: ns } });
    client.close();
    assert.ok(tunnels.length > before, "requests went through the proxy");
    assert.ok(
      tunnels.slice(before).every((t) => t === `kubernetes:${port()}`),
      `tunnels: ${tunnels}`,
    );
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "via-env"));
  });

  it("leaves hosts listed in NO_PROXY off the proxy", async () => {
    const before = tunnels.length;
    const client = KubeClient.fromKubeconfig({
      kubeconfig: underProxyOnlyName(),
      env: { HTTPS_PROXY: proxyUrl, NO_PROXY: "example.org,kubernetes" },
      timeoutMs: 5_000,
    });
    // Direct, the name does not resolve: the request fails without touching the proxy.
    await assert.rejects(client.ping());
    client.close();
    assert.equal(tunnels.length, before, "nothing went through the proxy");
  });

  it("a kubeconfig's proxy-url takes precedence over HTTPS_PROXY", async () => {
    const before = tunnels.length;
    const client = KubeClient.fromKubeconfig({
      kubeconfig: underProxyOnlyName({ "proxy-url": proxyUrl }),
      // A proxy nothing listens on: used, the request would fail.
      env: { HTTPS_PROXY: "http://127.0.0.1:9" },
    });
    await client.ping();
    client.close();
    assert.ok(tunnels.length > before, "went through proxy-url");
  });
});
