// Hooks and retries through the reconciler: which operations run hooks, what history says about
// them, and which revision a retry syncs.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { EnvironmentController } from "../../src/reconciler/environment-controller.ts";
import { LocalGitSource, type RevisionSource } from "../../src/reconciler/revision-source.ts";
import { StateStore } from "../../src/state/store.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { envConfig } from "../support/env.ts";
import { makeRepo } from "../support/git-repo.ts";

const cluster = useCluster();
const cache = mkdtempSync(join(tmpdir(), "syncward-trees-"));

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;
const migrate = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: "tools:1", args: [migrate]}]
`;
const invalidService =
  "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 70000}]}\n";

async function setup(
  fields: Record<string, unknown>,
  files: Record<string, string>,
  wrap: (s: RevisionSource) => RevisionSource = (s) => s,
) {
  const ns = await cluster.namespace("rhooks");
  const stateNs = await cluster.stateNamespace("rhooks-state");
  const repo = makeRepo(files);
  const store = new StateStore(cluster.syncwardClient, stateNs);
  const controller = new EnvironmentController({
    app: "hooks",
    env: envConfig(ns, { source: { path: "app" }, ...fields }),
    client: cluster.syncwardClient,
    store,
    source: wrap(new LocalGitSource(repo.dir, cache)),
    emit: () => undefined,
    log: pino({ level: "silent" }),
    pollIntervalMs: 0,
    watch: false,
  });
  return { ns, repo, store, controller };
}

describe("hooks through the reconciler", () => {
  it("lists hooks in history; a new revision that renders the same runs none; an explicit sync runs them again", async () => {
    const { repo, store, controller } = await setup(
      { syncPolicy: { automated: { prune: true } } },
      { "app/cm.yaml": cm("1"), "app/migrate.yaml": migrate },
    );
    controller.start();
    try {
      const first = repo.head();
      const state = await eventually("the first release", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === first ? s : undefined;
      });
      assert.deepEqual(state.history.at(-1)?.hooks, [
        { kind: "Job", name: "migrate", phase: "PreSync", wave: 0, outcome: "Succeeded" },
      ]);
      // A commit outside the environment's path: same render, recorded, no hook.
      const docs = repo.commit({ "README.md": "notes\n" });
      controller.nudge("push", "bob");
      const after = await eventually("the docs commit synced", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === docs ? s : undefined;
      });
      assert.equal(after.history.at(-1)?.hooks, undefined, "no hook ran for a revision that changed nothing");
      const manual = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(manual.phase, "Succeeded", manual.message);
      const last = (await store.load(controller.instance)).history.at(-1);
      assert.equal(last?.trigger, "cli");
      assert.deepEqual(
        last?.hooks?.map((h) => [h.name, h.phase, h.outcome]),
        [["migrate", "PreSync", "Succeeded"]],
      );
    } finally {
      await controller.stop();
    }
  });
});

describe("a revision that changes only a hook", () => {
  it("runs it, though no managed object changes; the next unrelated revision runs none", async () => {
    const { repo, store, controller } = await setup(
      { syncPolicy: { automated: { prune: true } } },
      { "app/cm.yaml": cm("1"), "app/migrate.yaml": migrate },
    );
    controller.start();
    try {
      await eventually("the first release", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === repo.head() ? s : undefined;
      });
      // A new migration: only the hook's command changes.
      const next = repo.commit({
        "app/migrate.yaml": migrate.replace("args: [migrate]", "args: [migrate, --to, v2]"),
      });
      controller.nudge("push", "bob");
      const synced = await eventually("the hook-only revision synced", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === next ? s : undefined;
      });
      assert.deepEqual(
        synced.history.at(-1)?.hooks?.map((h) => [h.phase, h.outcome]),
        [["PreSync", "Succeeded"]],
        "the changed hook ran",
      );
      const docs = repo.commit({ "README.md": "notes\n" });
      controller.nudge("push", "bob");
      const after = await eventually("the docs commit synced", async () => {
        const s = await store.load(controller.instance);
        return s.lastSyncedRevision === docs ? s : undefined;
      });
      assert.equal(after.history.at(-1)?.hooks, undefined, "an unrelated revision runs no hook");
    } finally {
      await controller.stop();
    }
  });
});

describe("which revision a retry syncs", () => {
  /** The branch's first read answers the broken commit; later reads see the fix that landed. */
  const fixLandsDuringTheSync =
    (broken: () => string) =>
    (source: RevisionSource): RevisionSource => {
      let reads = 0;
      return {
        description: source.description,
        head: async (branch) => (reads++ === 0 ? broken() : source.head(branch)),
        resolve: (ref) => source.resolve(ref),
        tree: (sha) => source.tree(sha),
      };
    };
  const retry = { limit: 2, backoff: { duration: "500ms", factor: 1, maxDuration: "500ms" } };

  it("stays on its operation's revision by default, as Argo CD", async () => {
    const repo0 = { "app/cm.yaml": cm("1"), "app/svc.yaml": invalidService };
    let broken = "";
    const { repo, store, controller } = await setup({ syncPolicy: { retry } }, repo0, (s) =>
      fixLandsDuringTheSync(() => broken)(s),
    );
    broken = repo.head();
    repo.commit({ "app/svc.yaml": null });
    const outcome = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(outcome.phase, "Failed");
    assert.equal(outcome.revision, broken);
    const entry = (await store.load(controller.instance)).history.at(-1);
    assert.deepEqual(
      entry?.retried?.map((r) => r.revision),
      [broken, broken],
    );
  });

  it("moves to the newest revision with retry.refresh, and not past an approval it lacks", async () => {
    let broken = "";
    const files = { "app/cm.yaml": cm("1"), "app/svc.yaml": invalidService };
    const fresh = await setup({ syncPolicy: { retry: { ...retry, refresh: true } } }, files, (s) =>
      fixLandsDuringTheSync(() => broken)(s),
    );
    broken = fresh.repo.head();
    const fix = fresh.repo.commit({ "app/svc.yaml": null });
    const moved = await fresh.controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(moved.phase, "Succeeded", moved.message);
    assert.equal(moved.revision, fix);

    let gatedBroken = "";
    const gated = await setup(
      { syncPolicy: { retry: { ...retry, refresh: true } }, approval: { users: ["carol"] } },
      files,
      (s) => fixLandsDuringTheSync(() => gatedBroken)(s),
    );
    gatedBroken = gated.repo.head();
    const unapproved = gated.repo.commit({ "app/svc.yaml": null });
    const held = await gated.controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(held.phase, "Failed");
    assert.equal(held.revision, gatedBroken, "the unapproved fix was not synced by a retry");
    const state = await gated.store.load(gated.controller.instance);
    assert.equal(state.pendingSync?.revision, unapproved, "the fix waits for its approval instead");
    assert.notEqual(state.lastSyncedRevision, unapproved);
  });
});

describe("deny windows and self-heal", () => {
  // Always active: opens every minute for two minutes. Manual syncs pass (manualSync: true).
  const alwaysDeny = (more: Record<string, unknown> = {}) => ({
    kind: "deny",
    schedule: "* * * * *",
    duration: "2m",
    manualSync: true,
    ...more,
  });
  const drift = (ns: string) =>
    cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/configmaps/settings`, {
      body: { data: { v: "changed by hand" } },
      contentType: "application/merge-patch+json",
    });
  const settingsOf = async (ns: string) =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "settings")) as unknown as { data: { v: string } }).data
      .v;

  it("keeps reverting drift inside a deny window, and stops when the window sets selfHeal: false", async () => {
    for (const [window, heals] of [
      [alwaysDeny(), true],
      [alwaysDeny({ selfHeal: false }), false],
    ] as const) {
      const { ns, store, controller } = await setup(
        { syncPolicy: { automated: { selfHeal: true } }, syncWindows: [window] },
        { "app/cm.yaml": cm("1") },
      );
      const synced = await controller.sync({ trigger: "cli", actor: "alice" });
      assert.equal(synced.phase, "Succeeded", synced.message);
      await drift(ns);
      controller.start();
      try {
        if (heals) {
          await eventually("self-heal inside the deny window", async () => (await settingsOf(ns)) === "1");
        } else {
          await eventually("the environment reported OutOfSync", async () => {
            const s = await store.load(controller.instance);
            return s.syncStatus === "OutOfSync";
          });
          await new Promise((r) => setTimeout(r, 1500));
          assert.equal(await settingsOf(ns), "changed by hand", "selfHeal: false holds remediation too");
        }
      } finally {
        await controller.stop();
      }
    }
  });
});

describe("--allow-empty through an approval", () => {
  it("keeps the flag of a held /sync until the approval releases it, then empties the environment", async () => {
    const { ns, repo, store, controller } = await setup(
      { approval: { users: ["carol"] } },
      { "app/cm.yaml": cm("1"), "app/keep.txt": "the path stays\n" },
    );
    const first = await controller.sync({ trigger: "cli", actor: "alice" });
    assert.equal(first.phase, "Succeeded", first.message);
    const empty = repo.commit({ "app/cm.yaml": null });
    const { held } = await controller.requestApprovedSync({
      trigger: "comment",
      actor: "alice",
      prune: true,
      allowEmpty: true,
    });
    assert.equal(held, true);
    assert.equal((await store.load(controller.instance)).pendingSync?.allowEmpty, true);
    await controller.approve(empty, "carol");
    await eventually("the empty revision synced", async () => {
      const s = await store.load(controller.instance);
      return s.lastSyncedRevision === empty;
    });
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined);
  });
});
