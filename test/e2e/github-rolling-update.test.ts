// A rolling update of syncward itself: three replicas of the GitHub App share the repository, and
// they are replaced one by one (each stopped gracefully, as SIGTERM does, and a new one started in
// its place) while pushes keep arriving at whichever replica is up. Every pushed commit is synced
// exactly once and nothing fails; each stopped replica leaves no Lease behind, so no environment
// waits out a lease for its holder to come back.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { Replicas, runTestRepository } from "../support/replicas.ts";
import { pushEvent, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
const APP = `gh_${repoIdOf("acme/shop")}`;
const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("a rolling update of three replicas while pushes arrive", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let ns: string;
  let stateNs: string;
  let replicas: Replicas;

  const live = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "settings")) as { data?: { v?: string } } | undefined)
      ?.data?.v;
  const leasesHeldBy = async (identity: string) =>
    (await cluster.client.list("coordination.k8s.io/v1", "Lease", { namespace: stateNs })).items
      .filter((l) => (l as { spec?: { holderIdentity?: string } }).spec?.holderIdentity === identity)
      .map((l) => l.metadata.name);

  before(async () => {
    ns = await cluster.namespace("roll");
    stateNs = await cluster.stateNamespace("roll-state");
    repo = makeRepo({ "app/cm.yaml": cm("0") });
    github = new FakeGitHub(
      repo,
      `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
`,
    );
    replicas = new Replicas(cluster.syncwardKubeconfig, stateNs, github);
  });

  after(() => replicas.stop());

  /** A replica up and running the repository (as a restarted pod does), holder or standby. */
  const up = async (identity: string) => {
    const app = await replicas.start(identity);
    await runTestRepository(app);
    return app;
  };

  it("syncs every pushed commit exactly once and leaves no Lease behind a stopped replica", async () => {
    const names = ["r1", "r2", "r3"];
    const running = new Map<string, TestApp>();
    for (const n of names) running.set(n, await up(n));
    await eventually("the first commit deployed", async () => (await live()) === "0", 60_000);

    const pushed: string[] = [];
    let before = repo.head();
    const push = async (to: TestApp, v: string) => {
      const sha = repo.commit({ "app/cm.yaml": cm(v) }, `v${v}`);
      await to.probot.receive(
        pushEvent({ after: sha, before, modified: ["app/cm.yaml"], sender: { login: "dev" } }),
      );
      before = sha;
      pushed.push(sha);
    };

    for (const [i, n] of names.entries()) {
      const leaving = running.get(n) as TestApp;
      const staying = [...running.entries()].find(([m]) => m !== n)?.[1] as TestApp;
      // A push arrives while the replica is being replaced (delivered to one that stays up).
      const stopping = leaving.parts.runtimes.stop();
      await push(staying, String(i + 1));
      await stopping;
      assert.deepEqual(await leasesHeldBy(n), [], `${n} released every Lease as it stopped`);
      running.delete(n);
      running.set(`${n}-new`, await up(`${n}-new`));
      await eventually(`v${i + 1} deployed`, async () => (await live()) === String(i + 1), 60_000);
    }
    // One more push after the whole roll, to a replica of the new generation.
    await push(running.get("r3-new") as TestApp, "4");
    await eventually("v4 deployed", async () => (await live()) === "4", 60_000);

    const runtime = [...running.values()].flatMap((a) => a.parts.runtimes.all())[0];
    assert.ok(runtime);
    const state = await eventually("the last push recorded", async () => {
      const s = await runtime.reconciler.store.load(`${APP}.dev`);
      return s.lastSyncedRevision === pushed.at(-1) ? s : undefined;
    });
    for (const sha of pushed) {
      const entries = state.history.filter((h) => h.revision === sha);
      assert.deepEqual(
        entries.map((h) => h.result),
        ["Succeeded"],
        `${sha.slice(0, 7)} synced exactly once: ${JSON.stringify(entries.map((h) => [h.trigger, h.result, h.message]))}`,
      );
    }
    assert.deepEqual(
      state.history
        .filter((h) => h.result !== "Succeeded")
        .map((h) => [h.revision.slice(0, 7), h.result, h.message]),
      [],
      "nothing failed or was interrupted",
    );
  });
});
