// A server that does not speak HTTP/2 (no h2 in ALPN): the first watch fails, and from then on
// watches go over HTTP/1.1. A local HTTPS server stands in for such an API server.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { KubeClient } from "../../../src/kube/client.ts";
import { KubeConnectionError } from "../../../src/kube/errors.ts";
import { selfSigned } from "../../support/self-signed.ts";

describe("watches against a server without HTTP/2", () => {
  it("fall back to HTTP/1.1 after the first refusal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "syncward-h1-"));
    const { cert, key } = selfSigned("api", "127.0.0.1");
    const server = createServer({ cert, key }, (req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/api/v1") {
        res.end(
          JSON.stringify({
            resources: [{ name: "configmaps", kind: "ConfigMap", namespaced: true, verbs: ["watch"] }],
          }),
        );
      } else {
        const object = { metadata: { name: "cm", resourceVersion: "7" } };
        res.end(`${JSON.stringify({ type: "ADDED", object })}\n`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        clusters: [
          {
            name: "c",
            cluster: {
              server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
              "certificate-authority-data": Buffer.from(cert).toString("base64"),
            },
          },
        ],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const client = KubeClient.fromKubeconfig({ kubeconfig });
    try {
      const watch = () => {
        const names: string[] = [];
        return client
          .watch("v1", "ConfigMap", { namespace: "ns", resourceVersion: "1" }, (_t, o) =>
            names.push(o.metadata.name),
          )
          .then((rv) => ({ rv, names }));
      };
      await assert.rejects(
        watch(),
        (err) => err instanceof KubeConnectionError && /no application protocol/i.test(err.message),
      );
      assert.deepEqual(await watch(), { rv: "7", names: ["cm"] });
      assert.equal(client.watchConnections, 0);
    } finally {
      client.close();
      server.close();
    }
  });
});
