import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { healthHandler } from "../../../src/observability/http.ts";
import { createMetrics } from "../../../src/observability/metrics.ts";

describe("healthHandler", () => {
  let server: Server;
  let base: string;
  let ready = false;
  const metrics = createMetrics({ defaultMetrics: false });
  metrics.countGitHubRequest("GET", 200);

  before(async () => {
    const handler = healthHandler({ metrics, ready: () => ready });
    // As Probot's server does: the first handler that returns true answered; otherwise 404.
    server = createServer((req, res) => {
      if (!handler(req, res)) res.writeHead(404).end("not found by the next handler");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers /healthz with 200 ok", async () => {
    const res = await fetch(`${base}/healthz`);
    assert.equal(res.status, 200);
    assert.equal((await res.text()).trim(), "ok");
  });

  it("answers /readyz with 503 until ready, then 200", async () => {
    ready = false;
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    ready = true;
    const res = await fetch(`${base}/readyz?verbose=1`);
    assert.equal(res.status, 200);
    await res.text();
  });

  it("serves Prometheus text on /metrics", async () => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^syncward_github_requests_total\{method="GET",status="200"\} 1$/m);
    assert.match(text, /^# HELP syncward_syncs_total /m);
  });

  it("leaves other paths to the next handler", async () => {
    const res = await fetch(`${base}/api/github/webhooks`);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), "not found by the next handler");
  });

  it("refuses other methods on its paths", async () => {
    const res = await fetch(`${base}/healthz`, { method: "POST", body: "x" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    await res.text();
  });
});
