// The process's bound on environment passes at once (pass-slots.ts), seen from a Reconciler that
// starts several environments together, as a controller does at start.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import type { SyncwardConfig } from "../../src/config/types.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { PassSlots } from "../../src/reconciler/pass-slots.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (env: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {env: "${env}"}\n`;

describe("passes at once", () => {
  it("starts five automated environments two at a time, and every one of them syncs", async () => {
    const names = ["a", "b", "c", "d", "e"];
    const namespaces = await Promise.all(names.map((n) => cluster.namespace(`slots-${n}`)));
    const stateNs = await cluster.stateNamespace("slots-state");
    const repo = makeRepo(Object.fromEntries(names.map((n) => [`envs/${n}/cm.yaml`, cm(n)])));
    const config = {
      environments: names.map((name, i) =>
        envConfig(namespaces[i] as string, {
          name,
          source: { path: `envs/${name}` },
          syncPolicy: { automated: {} },
        }),
      ),
    } as SyncwardConfig;
    const slots = new PassSlots(2);
    let syncing = 0;
    let most = 0;
    let mostActive = 0;
    const synced = new Set<string>();
    const reconciler = new Reconciler({
      app: "slots",
      config,
      client: cluster.syncwardClient,
      source: new LocalGitSource(repo.dir, cache),
      emit: (e: ReconcilerEvent) => {
        mostActive = Math.max(mostActive, slots.active);
        if (e.type === "syncStarted") most = Math.max(most, ++syncing);
        if (e.type === "synced") {
          syncing--;
          if (e.outcome.phase === "Succeeded") synced.add(e.env);
        }
      },
      log: pino({ level: "silent" }),
      stateNamespace: stateNs,
      identity: "replica-1",
      leases: false,
      watch: false,
      pollIntervalMs: 0,
      passes: slots,
    });
    reconciler.start();
    try {
      await eventually("every environment synced", async () => synced.size === names.length);
      for (const [i, ns] of namespaces.entries()) {
        const live = (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as {
          data: { env: string };
        };
        assert.equal(live.data.env, names[i]);
      }
      assert.ok(most <= 2, `at most two syncs at once (saw ${most})`);
      assert.ok(mostActive <= 2, `at most two passes held slots (saw ${mostActive})`);
      assert.equal(slots.waiting, 0);
    } finally {
      await reconciler.stop();
    }
    assert.equal(slots.active, 0, "every slot given back");
  });
});
