// How watches reach servers that behave unlike the test plane, with local HTTPS servers standing
// in for the API server: one without HTTP/2 (no h2 in ALPN), where the first watch fails and the
// next ones go over HTTP/1.1; and one that sends GOAWAY, after which watches open a new session.
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createSecureServer } from "node:http2";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { KubeClient } from "../../../src/kube/client.ts";
import { KubeConnectionError } from "../../../src/kube/errors.ts";
import { selfSigned } from "../../support/self-signed.ts";

const { cert, key } = selfSigned("api", "127.0.0.1");
const DISCOVERY = JSON.stringify({
  resources: [{ name: "configmaps", kind: "ConfigMap", namespaced: true, verbs: ["watch"] }],
});
/** One watch event, then the end of the stream (as a server's timeoutSeconds would end it). */
const EVENT = `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "cm", resourceVersion: "7" } } })}\n`;

async function clientOf(server: Server | ReturnType<typeof createSecureServer>): Promise<KubeClient> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "syncward-watch-")), "kubeconfig");
  const cluster = {
    server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    "certificate-authority-data": Buffer.from(cert).toString("base64"),
  };
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      clusters: [{ name: "c", cluster }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
  return KubeClient.fromKubeconfig({ kubeconfig });
}

function watchOnce(
  client: KubeClient,
  namespace = "ns",
  signal?: AbortSignal,
): Promise<{ rv: string; names: string[] }> {
  const names: string[] = [];
  return client
    .watch("v1", "ConfigMap", { namespace, resourceVersion: "1", signal }, (_t, o) =>
      names.push(o.metadata.name),
    )
    .then((rv) => ({ rv, names }));
}

describe("watch transport", () => {
  it("falls back to HTTP/1.1 after a server refuses HTTP/2", async () => {
    const server = createServer({ cert, key }, (req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(req.url === "/api/v1" ? DISCOVERY : EVENT);
    });
    const client = await clientOf(server);
    try {
      await assert.rejects(
        watchOnce(client),
        (err) => err instanceof KubeConnectionError && /no application protocol/i.test(err.message),
      );
      assert.deepEqual(await watchOnce(client), { rv: "7", names: ["cm"] });
      assert.equal(client.watchConnections, 0);
      // A caller re-watches with one signal for as long as it runs: no listener stays behind.
      const signal = new AbortController().signal;
      for (let i = 0; i < 12; i++) await watchOnce(client, "ns", signal);
      assert.equal(getEventListeners(signal, "abort").length, 0);
    } finally {
      client.close();
      server.close();
    }
  });

  it("opens a new HTTP/2 session while the old one drains after GOAWAY", async () => {
    let sessions = 0;
    let drained!: () => void;
    const goaway = new Promise<void>((resolve) => {
      drained = resolve;
    });
    const server = createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/api/v1") return res.end(DISCOVERY);
      if (!req.url?.includes("/namespaces/held/")) return res.end(EVENT);
      // A watch the server keeps open while it winds the connection down (a restart, a rebalance).
      res.writeHead(200);
      res.stream.session?.goaway();
      setTimeout(drained, 50);
    });
    server.on("session", () => sessions++);
    const client = await clientOf(server);
    const abort = new AbortController();
    try {
      const held = watchOnce(client, "held", abort.signal);
      await goaway;
      assert.deepEqual(await watchOnce(client), { rv: "7", names: ["cm"] });
      assert.equal(sessions, 2, "the draining session took no new stream");
      abort.abort();
      await held;
    } finally {
      client.close();
      server.close();
    }
  });
});
