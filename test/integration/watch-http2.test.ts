// Watches over HTTP/2: many watches share a few connections to the real API server (at most
// STREAMS_PER_SESSION streams each) and still deliver their events; ended watches free them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { STREAMS_PER_SESSION } from "../../src/kube/http2-streams.ts";
import { eventually, useCluster } from "../support/cluster.ts";

const cluster = useCluster();

describe("watches over HTTP/2", () => {
  it("runs 150 watches on two connections and delivers each one's events", async () => {
    const namespaces = await Promise.all([0, 1, 2].map((i) => cluster.namespace(`h2-${i}`)));
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig });
    const abort = new AbortController();
    const seen = new Map<number, string[]>();
    const watches = Array.from({ length: 150 }, async (_, i) => {
      const namespace = namespaces[i % namespaces.length] as string;
      const { resourceVersion } = await client.list("v1", "ConfigMap", { namespace });
      return client.watch(
        "v1",
        "ConfigMap",
        { namespace, resourceVersion, signal: abort.signal },
        (type, obj) => {
          seen.set(i, [...(seen.get(i) ?? []), `${type} ${obj.metadata.name}`]);
        },
      );
    });
    try {
      await eventually("150 watches open", async () => client.counts.byVerb.WATCH === 150 || undefined);
      assert.equal(client.watchConnections, Math.ceil(150 / STREAMS_PER_SESSION));
      for (const namespace of namespaces) {
        await cluster.client.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "ping", namespace },
        });
      }
      await eventually(
        "every watch saw its namespace's ConfigMap",
        async () =>
          Array.from({ length: 150 }, (_, i) => seen.get(i)?.includes("ADDED ping")).every(Boolean) ||
          undefined,
      );
    } finally {
      abort.abort();
      await Promise.all(watches);
      client.close();
    }
    assert.equal(client.watchConnections, 0);
  });
});
