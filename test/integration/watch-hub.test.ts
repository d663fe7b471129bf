// The managed-object watches of every environment of a process share one stream per kind: two
// environments in one namespace open one watch, an edit of one environment's object nudges that
// environment only, and a re-list (410) tells every environment anything may have changed.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { INSTANCE_LABEL } from "../../src/engine/tracking.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import { ManagedWatch } from "../../src/reconciler/watch.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { provisionNamespacedAccount } from "../support/syncward-account.ts";

const cluster = useCluster();
const quiet = { debug() {}, warn() {} };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function configMap(namespace: string, name: string, instance: string, value: string) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels: { [INSTANCE_LABEL]: instance } },
    data: { value },
  };
}

/** Two environments' watches on one client; what each heard (object names, or "*" for anything). */
function twoEnvironments(client: KubeClient, namespace: string) {
  const heard = { a: [] as string[], b: [] as string[] };
  const watch = (instance: string, into: string[]) => {
    const w = new ManagedWatch(client, instance, [namespace], quiet, (named) =>
      into.push(...(named ? [...named].map((k) => k.split("/").pop() ?? k) : ["*"])),
    );
    w.ensureKinds([{ apiVersion: "v1", kind: "ConfigMap" }]);
    return w;
  };
  const watches = [watch("hub-a.dev", heard.a), watch("hub-b.dev", heard.b)];
  return {
    heard,
    stop: () => {
      for (const w of watches) w.stop();
    },
  };
}

describe("the watch hub", () => {
  it("serves two environments in one namespace with one stream and nudges only the owner", async () => {
    const ns = await cluster.namespace("hub");
    await cluster.client.apply(configMap(ns, "a-config", "hub-a.dev", "1"));
    await cluster.client.apply(configMap(ns, "b-config", "hub-b.dev", "1"));
    // A client of its own, so its request counts are this test's alone.
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig });
    const { heard, stop } = twoEnvironments(client, ns);
    try {
      let n = 2;
      await eventually("A hears an edit of its object", async () => {
        await cluster.client.apply(configMap(ns, "a-config", "hub-a.dev", String(n++)));
        await pause(200);
        return heard.a.includes("a-config") || undefined;
      });
      assert.equal(client.counts.byVerb.WATCH, 1, "two environments, one watch stream");
      assert.deepEqual(heard.b, [], "B heard nothing of A's object");
      await eventually("B hears an edit of its object", async () => {
        await cluster.client.apply(configMap(ns, "b-config", "hub-b.dev", String(n++)));
        await pause(200);
        return heard.b.includes("b-config") || undefined;
      });
      assert.ok(!heard.a.includes("b-config"), `A did not hear B's object: ${heard.a.join(", ")}`);
      // An object handed from A to B (its label changed) concerns both.
      const handed = { a: heard.a.length, b: heard.b.length };
      await cluster.client.apply(configMap(ns, "a-config", "hub-b.dev", String(n++)));
      await eventually("A and B both hear the hand-over", async () =>
        heard.a.slice(handed.a).includes("a-config") && heard.b.slice(handed.b).includes("a-config")
          ? true
          : undefined,
      );
      await pause(200);
      // An object without the label, or with another environment's, nudges nobody here.
      const before = { a: heard.a.length, b: heard.b.length };
      await cluster.client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "plain", namespace: ns },
      });
      await cluster.client.apply(configMap(ns, "c-config", "hub-c.dev", "1"));
      await pause(500);
      assert.deepEqual({ a: heard.a.length, b: heard.b.length }, before);
    } finally {
      stop();
      client.close();
    }
  });

  it("falls back to one stream per namespace where a cluster-wide watch is forbidden", async () => {
    const ns = await cluster.namespace("hub-ns");
    const kubeconfig = provisionNamespacedAccount(
      cluster.kubeconfig,
      ns,
      join(mkdtempSync(join(tmpdir(), "syncward-hub-")), "kubeconfig"),
    );
    const client = KubeClient.fromKubeconfig({ kubeconfig });
    await assert.rejects(
      client.list("v1", "ConfigMap", {}),
      (err) => err instanceof KubeApiError && err.status === 403,
    );
    const { heard, stop } = twoEnvironments(client, ns);
    try {
      let n = 0;
      await eventually("A hears its object through the namespace's stream", async () => {
        await cluster.client.apply(configMap(ns, "a-config", "hub-a.dev", String(n++)));
        await pause(200);
        return heard.a.includes("a-config") || undefined;
      });
      // The cluster-wide list was refused before any watch; then one watch serves the namespace.
      assert.equal(client.counts.byVerb.WATCH, 1);
      assert.ok(!heard.b.includes("a-config"));
    } finally {
      stop();
      client.close();
    }
  });

  it("tells every environment of the stream that anything may have changed after a re-list", async () => {
    const ns = await cluster.namespace("hub-410");
    const real = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig });
    // The real client, except that its first watch ends in the 410 an expired resourceVersion gets.
    let expired = false;
    const client = Object.create(real) as KubeClient;
    client.watch = (async (...args: Parameters<KubeClient["watch"]>) => {
      if (!expired) {
        expired = true;
        await pause(100);
        throw new KubeApiError("too old resource version", 410, "Expired", "WATCH", "/");
      }
      return real.watch(...args);
    }) as KubeClient["watch"];
    const { heard, stop } = twoEnvironments(client, ns);
    try {
      await eventually("both environments told to look again", async () =>
        heard.a.includes("*") && heard.b.includes("*") ? true : undefined,
      );
      // After the re-list the stream still delivers, to the owner only.
      let n = 0;
      await eventually("A hears its object after the re-list", async () => {
        await cluster.client.apply(configMap(ns, "a-config", "hub-a.dev", String(n++)));
        await pause(200);
        return heard.a.includes("a-config") || undefined;
      });
      assert.ok(!heard.b.includes("a-config"));
    } finally {
      stop();
      real.close();
    }
  });
});

describe("the watch hub's undeclared scope", () => {
  it("serves every environment's watch of undeclared objects with one stream per kind", async () => {
    const ns = await cluster.namespace("hub-undeclared");
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig });
    const heard = new Map<string, string[]>();
    const watches = ["hub-a.dev", "hub-b.dev"].map((instance) => {
      heard.set(instance, []);
      const w = new ManagedWatch(
        client,
        instance,
        [ns],
        quiet,
        (named) => heard.get(instance)?.push(...(named ?? ["*"])),
        { undeclared: true, accept: (obj) => obj.metadata.labels?.[INSTANCE_LABEL] !== instance },
      );
      w.ensureKinds([{ apiVersion: "v1", kind: "ConfigMap" }]);
      return w;
    });
    try {
      let n = 0;
      await eventually("both hear an object nobody declared", async () => {
        await cluster.client.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "stray", namespace: ns },
          data: { n: String(n++) },
        });
        await pause(200);
        return [...heard.values()].every((h) => h.some((k) => k.endsWith("/stray"))) || undefined;
      });
      assert.equal(client.counts.byVerb.WATCH, 1, "two environments, one watch stream");
      // Each environment's own filter still applies: A's labelled object is undeclared only for B.
      await eventually("B hears A's object, A does not", async () => {
        await cluster.client.apply(configMap(ns, "a-owned", "hub-a.dev", String(n++)));
        await pause(200);
        return heard.get("hub-b.dev")?.some((k) => k.endsWith("/a-owned")) || undefined;
      });
      assert.ok(!heard.get("hub-a.dev")?.some((k) => k.endsWith("/a-owned")));
    } finally {
      for (const w of watches) w.stop();
      client.close();
    }
  });
});
