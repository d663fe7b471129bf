// What is approved is what is applied, on the real plane with real git and kustomize: a prod
// commit's kustomization reads a file the test rewrites in the checked-out tree between renders
// (standing in for a remote input that changed after the approval). The changed render of the
// same, approved and deployed commit is a new release: a restarted process's pass (self-heal's
// path), `/sync` and a manual sync apply none of it, the environment waits for approval and says
// why, and a fresh approval of the new render applies it.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { stringify } from "yaml";
import { findEnvironment, parseConfig } from "../../src/config/load.ts";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import type { ReconcilerEvent } from "../../src/reconciler/events.ts";
import { LocalGitSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const kustomization = stringify({
  resources: ["settings.yaml"],
  configMapGenerator: [{ name: "remote", files: ["remote.txt"], options: { disableNameSuffixHash: true } }],
});
const settings = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: one}\n";

async function setup() {
  const ns = await cluster.namespace("arender");
  const stateNs = await cluster.stateNamespace("arender-state");
  const config = stringify({
    environments: [
      {
        name: "prod",
        source: { path: "app" },
        destination: { namespace: ns },
        syncPolicy: { automated: { selfHeal: true } },
        approval: { users: ["carol"] },
      },
    ],
  });
  const repo = makeRepo({
    ".github/syncward.yml": config,
    "app/kustomization.yaml": kustomization,
    "app/settings.yaml": settings,
    "app/remote.txt": "approved",
  });
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const events: ReconcilerEvent[] = [];
  const source = new LocalGitSource(repo.dir, cache);
  /** A new process (a restart, or the replica the lease moved to): same state, nothing cached. */
  const processOf = () =>
    new EnvironmentController({
      app: "arender",
      env: findEnvironment(parseConfig(config), "prod"),
      client: cluster.syncwardClient,
      store,
      source,
      emit: (e) => events.push(e),
      log: pino({ level: "silent" }),
      pollIntervalMs: 0,
      watch: false,
    });
  const remote = async () =>
    (
      (await cluster.client.get("v1", "ConfigMap", ns, "remote")) as
        | { data?: Record<string, string> }
        | undefined
    )?.data?.["remote.txt"];
  /** The remote input changes: the commit's tree is the same, what it renders is not. */
  const rewrite = async (sha: string, text: string) =>
    writeFileSync(join(await source.tree(sha), "app/remote.txt"), text);
  const reasons = () => events.flatMap((e) => (e.type === "awaitingApproval" ? [e.reason ?? ""] : []));
  const sha = repo.head();
  // Commits on another branch, for previews: rendering them evicts the branch head's render.
  repo.git("checkout", "-q", "-b", "previews");
  const others = ["a", "b", "c", "d"].map((n) => repo.commit({ [`app/${n}.txt`]: n }));
  repo.git("checkout", "-q", "main");
  return { ns, sha, others, store, events, processOf, remote, rewrite, reasons };
}

describe("an approval binds the render", () => {
  it("a changed render of the approved commit waits for a fresh approval, through a restart, self-heal, /sync and a render-cache eviction", async () => {
    const { ns, sha, others, store, events, processOf, remote, rewrite, reasons } = await setup();

    // The commit waits, is approved, and its render is applied.
    const first = processOf();
    first.nudge("push", "alice");
    await first.idle();
    assert.equal((await store.load(first.instance)).pendingSync?.revision, sha);
    const approved = await first.approve(sha, "carol", 3);
    assert.equal(approved.released, true);
    await eventually("the approved render applied", async () => (await remote()) === "approved");
    await first.idle();
    const deployed = await store.load(first.instance);
    assert.equal(deployed.lastSyncedRevision, sha);
    const approvedDigest = deployed.renderedDigest;

    // The remote input changes; someone also edits the live object (drift for self-heal).
    await rewrite(sha, "changed after approval");
    kubectl(["-n", ns, "patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"v":"edited"}}']);

    // A restarted process renders the commit afresh: its pass neither heals nor syncs the new render.
    const restarted = processOf();
    events.length = 0;
    restarted.nudge("poll", "syncward");
    await restarted.idle();
    assert.equal(await remote(), "approved", "the changed render was not applied");
    let state = await store.load(restarted.instance);
    assert.equal(state.renderedDigest, approvedDigest);
    assert.equal(state.pendingSync?.revision, sha, "the environment waits for approval");
    assert.notEqual(state.pendingSync?.render, approvedDigest);
    assert.equal(state.syncStatus, "OutOfSync");
    const [waiting] = reasons();
    assert.match(
      waiting ?? "",
      new RegExp(
        `the render of ${sha.slice(0, 7)} changed since it was approved: /ConfigMap:${ns}/remote changed`,
      ),
    );
    assert.doesNotMatch(waiting ?? "", /changed after approval/, "names objects, never their content");
    // Another pass of the same process (self-heal's turn) announces nothing again and applies nothing.
    events.length = 0;
    restarted.nudge("poll", "syncward");
    await restarted.idle();
    assert.deepEqual(
      events.filter((e) => e.type === "awaitingApproval" || e.type === "selfHealed" || e.type === "synced"),
      [],
    );

    // `/sync prod` and a manual sync from a comment are held for approval too.
    const asked = await restarted.requestApprovedSync({ trigger: "comment", actor: "alice", actorId: 9 });
    assert.deepEqual({ held: asked.held, revision: asked.revision }, { held: true, revision: sha });
    const manual = await restarted.sync({ trigger: "comment", actor: "alice" });
    assert.equal(manual.phase, "Refused");
    assert.match(manual.message, /the render of .* changed since it was approved/);
    assert.equal(await remote(), "approved");

    // The first process still holds the approved render in memory: it stays on it (nothing new applied).
    first.nudge("poll", "syncward");
    await first.idle();
    assert.equal(await remote(), "approved");
    // Four previews (`/diff` of other commits) evict that render: its next pass renders afresh and waits too.
    for (const other of others) await first.inspect(other);
    events.length = 0;
    first.nudge("poll", "syncward");
    await first.idle();
    assert.equal(await remote(), "approved", "an evicted render is not re-rendered into the cluster");
    assert.match(reasons()[0] ?? "", /the render of .* changed since it was approved/);

    // A fresh approval of the new render applies it, as the /sync that waited.
    state = await store.load(restarted.instance);
    const fresh = await restarted.approve(sha, "carol", 3);
    assert.equal(fresh.released, true, fresh.refused);
    await eventually(
      "the newly approved render applied",
      async () => (await remote()) === "changed after approval",
    );
    await restarted.idle();
    const after = await store.load(restarted.instance);
    assert.equal(after.renderedDigest, state.pendingSync?.render);
    assert.equal(after.pendingSync, undefined);
    await first.stop();
    await restarted.stop();
  });

  it("an approval given for the render the wait showed does not release another render of the commit", async () => {
    const { ns, sha, store, processOf, remote, rewrite, reasons } = await setup();
    const first = processOf();
    first.nudge("push", "alice");
    await first.idle();
    const shown = (await store.load(first.instance)).pendingSync?.render;
    assert.ok(shown);
    // The remote input changes before anyone approves; the approver saw (and approves) the first render.
    await rewrite(sha, "changed before approval");
    const restarted = processOf();
    const approved = await restarted.approve(sha, "carol", 3);
    assert.equal(approved.released, false);
    assert.match(
      approved.refused ?? "",
      /the render of .* changed since it was approved: \/ConfigMap:.*\/remote changed/,
    );
    restarted.nudge("poll", "syncward");
    await restarted.idle();
    assert.equal(await remote(), undefined, "nothing was applied");
    const state = await store.load(restarted.instance);
    assert.notEqual(state.pendingSync?.render, shown, "the wait is announced again for the render now");
    assert.match(reasons().at(-1) ?? "", new RegExp(`/ConfigMap:${ns}/remote changed`));
    // Approving what is shown now deploys it.
    assert.equal((await restarted.approve(sha, "carol", 3)).released, true);
    await eventually(
      "the render approved applied",
      async () => (await remote()) === "changed before approval",
    );
    await restarted.idle();
    await first.stop();
    await restarted.stop();
  });
});
