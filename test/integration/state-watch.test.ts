// The state ConfigMaps are watched once per process, not once per app: every app of a replica
// listens through the same watch, and each state write reaches only the app it belongs to. Before,
// A apps meant A watches that each saw every write: an idle cost growing with the square of A.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeClient } from "../../src/kube/client.ts";
import { watchStates } from "../../src/reconciler/state-watch.ts";
import { INSTANCE_ANNOTATION, StateStore } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";

const cluster = useCluster();

/** The real client, with its watch requests on state ConfigMaps counted. */
function countingWatches(client: KubeClient): { client: KubeClient; watches: () => number } {
  let n = 0;
  const counted = Object.create(client) as KubeClient;
  counted.watch = ((...args: Parameters<KubeClient["watch"]>) => {
    if (args[1] === "ConfigMap") n++;
    return client.watch(...args);
  }) as KubeClient["watch"];
  return { client: counted, watches: () => n };
}

describe("the shared state watch", () => {
  it("serves every app through one watch and hands each write only to its own app", async () => {
    const ns = await cluster.stateNamespace("state-watch");
    const store = new StateStore(cluster.client, ns);
    const { client, watches } = countingWatches(cluster.client);
    const apps = Array.from({ length: 20 }, (_, i) => `acme-app${i}`);
    const seen = new Map<string, string[]>(apps.map((a) => [a, []]));
    const stops = apps.map((app) =>
      watchStates(client, ns, [`${app}.dev`, `${app}.prod`], (obj) =>
        seen.get(app)?.push(obj.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "?"),
      ),
    );
    // The first write creates each ConfigMap (ADDED); later writes modify it, which is what apps
    // hear. Writes made before the watch has started are in its first list, not events: write
    // until heard.
    for (const app of apps) await store.update(`${app}.dev`, (s) => void s);
    await store.update("acme-app3.prod", (s) => void s);
    let n = 0;
    const touch = (instance: string) =>
      store.update(instance, (s) => {
        s.syncStatus = n++ % 2 ? "Synced" : "OutOfSync";
      });
    await eventually("every app hears its own writes", async () => {
      for (const app of apps) if (!seen.get(app)?.includes(`${app}.dev`)) await touch(`${app}.dev`);
      if (!seen.get("acme-app3")?.includes("acme-app3.prod")) await touch("acme-app3.prod");
      await new Promise((r) => setTimeout(r, 200));
      return [...seen].every(([app, heard]) => heard.includes(`${app}.dev`)) &&
        seen.get("acme-app3")?.includes("acme-app3.prod")
        ? true
        : undefined;
    });
    assert.equal(watches(), 1, "twenty apps, one watch");
    for (const [app, instances] of seen)
      assert.ok(
        instances.every((i) => i.startsWith(`${app}.`)),
        `${app} heard only its own environments: ${instances.join(", ")}`,
      );

    // The last app to stop listening ends the watch; the next one to listen starts a new one.
    for (const stop of stops) stop();
    const later: string[] = [];
    const stop = watchStates(client, ns, ["acme-app0.dev"], (obj) =>
      later.push(obj.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "?"),
    );
    await eventually("the new watch hears a write", async () => {
      await touch("acme-app0.dev");
      await new Promise((r) => setTimeout(r, 200));
      return later.length > 0 ? true : undefined;
    });
    assert.equal(watches(), 2);
    assert.deepEqual([...new Set(later)], ["acme-app0.dev"]);
    stop();
  });
});
