// Automatic rollback on the real control plane: dev (automated, rollback.onDegraded 3s) runs a
// Healthy release, then a release whose Deployment cannot become ready (its pod fits no node, and
// its progress deadline is 2s, after which the Deployment controller marks it failed: Degraded).
// The watch hears the Deployment turn, the pass records it, and 3s later dev is back on the
// Healthy release, pinned there, exactly once: unpinning deploys the bad release again, which is
// never rolled back a second time. A later bad release that added a CRD is reported, not rolled
// back past.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { Reconciler } from "../../src/reconciler/reconciler.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import type { EnvironmentState } from "../../src/state/types.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const ON_DEGRADED_MS = 3_000;

/**
 * A Deployment that becomes ready (kwok runs its pod), or one whose pod no node takes. No old
 * ReplicaSets are kept: on a loaded machine a rollout back onto a kept one left the Deployment
 * controller's Progressing condition at NewReplicaSetAvailable, never ProgressDeadlineExceeded
 * (a race in the controller, 6 runs of 6 at six files at once), so the same bad release read
 * Progressing, as Argo CD would read it too, not Degraded. A fresh ReplicaSet times out every time.
 */
const deployment = (ready: boolean) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  progressDeadlineSeconds: 2
  revisionHistoryLimit: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
${ready ? "" : '      nodeSelector: {syncward.dev/no-such-node: "true"}\n'}      containers: [{name: web, image: "example.com/web:${ready ? "good" : "bad"}"}]
`;
const conf = (version: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\ndata: {version: "${version}"}\n`;
const group = `r${Math.random().toString(36).slice(2, 8)}.example.com`;
const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

describe("automatic rollback (rollback.onDegraded 3s)", () => {
  let repo: TestRepo;
  let reconciler: Reconciler;
  let ns: string;
  const events: ReconcilerEvent[] = [];
  const rollbacks = () => events.filter((e) => e.type === "autoRollback");
  const state = (): Promise<EnvironmentState> => reconciler.store.load(reconciler.controller("dev").instance);
  const live = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "conf")) as { data?: { version?: string } } | undefined)
      ?.data?.version;
  const push = () => reconciler.controller("dev").nudge("push", "pusher");

  before(async () => {
    ns = await cluster.namespace("autorb");
    const stateNs = await cluster.stateNamespace("autorb-state");
    repo = makeRepo({ "app/web.yaml": deployment(true), "app/conf.yaml": conf("v1") });
    reconciler = new Reconciler({
      app: `autorb-${ns}`,
      config: parseConfig(
        stringify({
          environments: [
            {
              name: "dev",
              source: { path: "app" },
              destination: { namespace: ns },
              syncPolicy: { automated: { prune: true, selfHeal: true } },
              rollback: { onDegraded: `${ON_DEGRADED_MS}ms` },
              policy: {
                clusterResources: [{ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" }],
              },
            },
          ],
        }),
      ),
      client: cluster.client,
      source: new LocalGitSource(repo.dir, mkdtempSync(join(tmpdir(), "syncward-trees-"))),
      emit: (e) => events.push(e),
      log: pino({ level: process.env.SYNCWARD_TEST_LOG ?? "silent" }),
      stateNamespace: stateNs,
      identity: "auto-rollback-test",
      leases: false,
      watch: true,
      // No polls: the Deployment turning Degraded reaches the environment by its watch alone.
      pollIntervalMs: 0,
    });
    reconciler.start();
  });
  after(async () => {
    await reconciler?.stop();
  });

  it("goes back to the last Healthy release once the new one has stayed Degraded, and pins there", async () => {
    const good = repo.head();
    await eventually("rev 1 synced and Healthy", async () => {
      const s = await state();
      return s.lastSyncedRevision === good && s.health === "Healthy";
    });
    const bad = repo.commit({ "app/web.yaml": deployment(false), "app/conf.yaml": conf("v2") });
    push();
    await eventually("the bad release synced", async () => (await state()).lastSyncedRevision === bad);
    assert.equal(await live(), "v2");
    const degradedAt = await eventually("the bad release Degraded", async () => {
      const s = await state();
      return s.degraded?.revision === bad ? Date.parse(s.degraded.since) : undefined;
    });
    await eventually("the automatic rollback", async () => rollbacks().length === 1, 30_000);
    const event = rollbacks()[0];
    assert.ok(event?.type === "autoRollback");
    assert.equal(event.revision, bad);
    assert.equal(event.to, good);
    assert.equal(event.refused, undefined);
    assert.equal(event.outcome?.phase, "Succeeded");
    assert.ok(Date.now() - degradedAt >= ON_DEGRADED_MS, "not before onDegraded has passed");

    assert.equal(await live(), "v1", "rev 1's objects are live again");
    const s = await state();
    assert.equal(s.pin?.revision, good);
    assert.equal(s.pin?.by, "syncward");
    const last = s.history.at(-1);
    assert.equal(last?.trigger, "autoRollback");
    assert.equal(last?.revision, good);
    assert.match(
      last?.message ?? "",
      /^rollback to history \d+ \([0-9a-f]{7}\) by syncward, pinned \([0-9a-f]{7} stayed Degraded for 3s/,
    );
    assert.equal(last?.autoRollback?.from, bad);
    assert.match(last?.autoRollback?.evidence.join("\n") ?? "", /Degraded since .*\n.*Healthy from /);
    assert.deepEqual(
      s.autoRollbacks?.map((m) => [m.revision, m.outcome]),
      [[bad, `rolled back to ${good.slice(0, 7)} (Succeeded)`]],
    );
    await eventually("rev 1 Healthy again", async () => (await state()).health === "Healthy");
  });

  it("never rolls the same release back twice: unpinned, it runs Degraded", async () => {
    const bad = (await state()).autoRollbacks?.[0]?.revision as string;
    await eventually(
      "the bad release's ReplicaSet cleaned up (revisionHistoryLimit: 0)",
      async () => (await cluster.client.list("apps/v1", "ReplicaSet", { namespace: ns })).items.length === 1,
    );
    await reconciler.controller("dev").unpin("alice");
    await eventually(
      "the bad release deployed again",
      async () => (await state()).lastSyncedRevision === bad,
    );
    await eventually("Degraded again", async () => (await state()).degraded?.revision === bad).catch(
      async (err: Error) => {
        const live = (await cluster.client.get("apps/v1", "Deployment", ns, "web")) as { status?: unknown };
        throw new Error(
          `${err.message}; recorded ${(await state()).health}, live ${JSON.stringify(live?.status)}`,
        );
      },
    );
    // Past its onDegraded and then some: nothing more happens.
    await new Promise((r) => setTimeout(r, ON_DEGRADED_MS + 2_000));
    assert.equal(rollbacks().length, 1);
    assert.equal((await state()).pin, undefined);
    assert.equal(await live(), "v2");
  });

  it("does not go back past a release that changed a CRD, and says why", async () => {
    const crdRelease = repo.commit({ "app/crd.yaml": crd, "app/conf.yaml": conf("v3") });
    push();
    await eventually("the CRD release synced", async () => (await state()).lastSyncedRevision === crdRelease);
    await eventually("its refusal", async () => rollbacks().length === 2, 30_000);
    const event = rollbacks()[1];
    assert.ok(event?.type === "autoRollback");
    assert.equal(event.revision, crdRelease);
    assert.match(
      event.refused ?? "",
      new RegExp(
        `CustomResourceDefinition gadgets\\.${group.replace(/\./g, "\\.")} \\(rollback\\.acrossCRDChanges: true allows it\\)`,
      ),
    );
    const s = await state();
    assert.equal(s.pin, undefined, "nothing pinned");
    assert.equal(await live(), "v3", "nothing rolled back");
    assert.match(
      s.autoRollbacks?.at(-1)?.outcome ?? "",
      /^not rolled back: going back to [0-9a-f]{7} would pass/,
    );
    await cluster.client.delete({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      group: "apiextensions.k8s.io",
      namespace: "",
      name: `gadgets.${group}`,
    });
  });
});
