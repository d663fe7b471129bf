// syncward_kubernetes_requests_total as a scrape shows it after real requests to an API server:
// each request once, by cluster, verb and the status it ended with, "error" when no answer came.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KubeClient } from "../../../src/kube/client.ts";
import { createMetrics } from "../../../src/observability/metrics.ts";

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.setHeader("Content-Type", "application/json");
    if (req.url === "/version") return res.end(JSON.stringify({ gitVersion: "v1.31.0" }));
    res.statusCode = req.method === "DELETE" ? 409 : 404;
    res.end(JSON.stringify({ kind: "Status", reason: "NotFound", message: "not found" }));
  });
});

function kubeconfig(server: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "kc-")), "kubeconfig");
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
  );
  return file;
}

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("syncward_kubernetes_requests_total", () => {
  let client: KubeClient;
  let down: KubeClient;

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    client = KubeClient.fromKubeconfig({ kubeconfig: kubeconfig(`http://127.0.0.1:${port}`) });
    // A port nothing listens on: the connection is refused, no response comes.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    down = KubeClient.fromKubeconfig({ kubeconfig: kubeconfig(`http://127.0.0.1:${closedPort}`) });
  });
  after(() => {
    client.close();
    down.close();
    server.close();
  });

  it("counts each request by verb and the status code it ended with, or error", async () => {
    await client.ping();
    await client.ping();
    await assert.rejects(client.request("GET", "/api/v1/namespaces/x/configmaps/missing"));
    await assert.rejects(client.request("DELETE", "/api/v1/namespaces/x/configmaps/c"));
    await assert.rejects(down.ping(1000));
    const m = createMetrics({
      defaultMetrics: false,
      durations: false,
      kubernetesRequests: () => [
        ["main", client.counts.byVerbAndCode],
        ["down", down.counts.byVerbAndCode],
      ],
    });
    const text = await m.registry.metrics();
    const series = (cluster: string, verb: string, code: string) =>
      sample(text, `syncward_kubernetes_requests_total{cluster="${cluster}",verb="${verb}",code="${code}"}`);
    assert.equal(series("main", "GET", "200"), 2);
    assert.equal(series("main", "GET", "404"), 1);
    assert.equal(series("main", "DELETE", "409"), 1);
    assert.equal(series("down", "GET", "error"), 1);
    assert.equal(series("main", "GET", "error"), undefined);
    assert.equal(client.counts.requests, 4, "the request count itself is unchanged");
  });
});
