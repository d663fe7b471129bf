// Installation and repository events across three replicas of the GitHub App on the real cluster:
// GitHub delivers each to one replica, which is seldom the one holding the repository's Lease. An
// uninstall (or the repository removed from the installation) delivered to a replica without the
// Lease stops the repository on every replica, the holder included, and nothing is synced for it
// after; a rename delivered to one stops the old name's runtime everywhere, keeps the state and
// objects (the repository's id names them), and the new name then runs on exactly one replica.
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { TRACKING_ANNOTATION } from "../../src/engine/tracking.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { appLeaseName } from "../../src/reconciler/reconciler.ts";
import { StateStore } from "../../src/state/store.ts";
import { startApp, type TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { runTestRepository } from "../support/replicas.ts";
import {
  installationEvent,
  installationRepositoriesEvent,
  listedRepository,
  pushEvent,
  repoIdOf,
  repositoryEvent,
} from "../support/webhooks.ts";

const cluster = useCluster();
/** The app of acme/shop: its GitHub id, which a rename keeps. */
const APP = `gh_${repoIdOf("acme/shop")}`;
const clients: KubeClient[] = [];
const apps: TestApp[] = [];
// Each test's replicas go with it: nock's interceptors are global, and the next test's config differs.
afterEach(async () => {
  for (const app of apps.splice(0)) {
    await app.parts.runtimes.stop();
    app.mock.reset();
  }
  for (const c of clients.splice(0)) c.close();
});

const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

/** Three replicas of the app, answered by one GitHub, none running a repository yet. */
async function startReplicas(name: string) {
  const ns = await cluster.namespace(name);
  const stateNs = await cluster.stateNamespace(`${name}-state`);
  const repo: TestRepo = makeRepo({ "app/cm.yaml": cm("1") });
  const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true, selfHeal: true}, retry: {limit: 0}}
`;
  const replicas: TestApp[] = [];
  const identities = ["replica-a", "replica-b", "replica-c"];
  for (const identity of identities) {
    const client = KubeClient.fromKubeconfig({ kubeconfig: cluster.syncwardKubeconfig });
    clients.push(client);
    const app = await startApp({
      client,
      stateNamespace: stateNs,
      autoStart: true,
      replica: { identity, watch: true },
    });
    answerEverything(app.mock, config, repo.dir);
    // The branch head, under whichever name the repository goes by.
    app.mock.api
      .persist()
      .get(/\/repos\/acme\/[^/]+\/branches\/main$/)
      .reply(() => [200, { name: "main", commit: { sha: repo.head() } }]);
    // The installation's repositories (what an install makes the receiving replica start).
    app.mock.api
      .persist()
      .get("/installation/repositories")
      .query(true)
      .reply(200, { total_count: 1, repositories: [listedRepository()] });
    apps.push(app);
    replicas.push(app);
  }
  const live = async () =>
    (await cluster.client.get("v1", "ConfigMap", ns, "settings")) as
      | { metadata: { uid?: string; annotations?: Record<string, string> }; data?: { v?: string } }
      | undefined;
  const leaseHolder = async (app: string) =>
    (
      (await cluster.client.get("coordination.k8s.io/v1", "Lease", stateNs, appLeaseName(app))) as
        | { spec?: { holderIdentity?: string } }
        | undefined
    )?.spec?.holderIdentity ?? "";
  const identityOf = (app: TestApp) => identities[replicas.indexOf(app)] ?? "";
  return { ns, stateNs, repo, replicas, live, leaseHolder, identityOf };
}

/** Three replicas running acme/shop, one of them holding its Lease and having deployed it. */
async function threeReplicas(name: string) {
  const t = await startReplicas(name);
  // Every replica runs the installed repository, as after a restart (bootstrap).
  for (const app of t.replicas) await runTestRepository(app);
  await eventually(
    "one replica to take the repository and deploy it",
    async () => (await t.live())?.data?.v === "1",
    60_000,
  );
  const holder = await eventually("the holder known", async () =>
    t.replicas.find((a) => a.parts.runtimes.all()[0]?.reconciler.active.includes("dev")),
  );
  await holder.settle();
  const others = t.replicas.filter((a) => a !== holder) as [TestApp, TestApp];
  return { ...t, holder, others };
}

/** Every replica stopped the repository, and its holder released the Lease. */
async function stoppedEverywhere(t: Awaited<ReturnType<typeof startReplicas>>): Promise<void> {
  await eventually(
    "every replica to stop the repository",
    async () => t.replicas.every((a) => running(a).length === 0),
    45_000,
  );
  await eventually("the holder to release the Lease", async () => (await t.leaseHolder(APP)) === "");
}

const running = (app: TestApp) => app.parts.runtimes.all().map((r) => `${r.info.owner}/${r.info.repo}`);

describe("repository events delivered to a replica without the Lease", () => {
  it("an install delivered to one replica starts the repository on every replica; one deploys it; an uninstall then stops it everywhere", async () => {
    const t = await startReplicas("gh-install");
    const [, receiver] = t.replicas as [TestApp, TestApp, TestApp];
    await receiver.probot.receive(installationEvent("created"));
    await eventually(
      "every replica to run the repository, though only one was told",
      async () => t.replicas.every((a) => running(a).join() === "acme/shop"),
      45_000,
    );
    await eventually("one replica to deploy it", async () => (await t.live())?.data?.v === "1", 60_000);
    const holding = await eventually("exactly one replica holding it", async () => {
      const r = t.replicas.filter((a) => a.parts.runtimes.all()[0]?.reconciler.active.includes("dev"));
      return r.length === 1 && r;
    });
    assert.ok((await t.leaseHolder(APP)).startsWith("replica-"));
    // The uninstall, delivered to a replica that does not hold it, stops it everywhere again.
    const other = t.replicas.find((a) => a !== holding[0]) as TestApp;
    await other.probot.receive(installationEvent("deleted"));
    await stoppedEverywhere(t);
    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(
      t.replicas.every((a) => running(a).length === 0),
      "no replica started it again from the Lease it was announced on",
    );
  });

  it("an uninstall stops the repository on every replica, the holder included; nothing is synced after", async () => {
    const t = await threeReplicas("gh-uninstall");
    const [receiver, bystander] = t.others;
    const history = (await new StateStore(cluster.client, t.stateNs).load(`${APP}.dev`)).history.length;

    await receiver.probot.receive(installationEvent("deleted"));
    await stoppedEverywhere(t);

    // With self-heal on, a running holder would put this back within a moment.
    await cluster.client.request("PATCH", `/api/v1/namespaces/${t.ns}/configmaps/settings`, {
      body: { data: { v: "edited by hand" } },
      contentType: "application/merge-patch+json",
    });
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal((await t.live())?.data?.v, "edited by hand", "nothing reverted it");
    assert.equal(await t.leaseHolder(APP), "", "no replica took the repository up again");
    assert.equal(
      (await new StateStore(cluster.client, t.stateNs).load(`${APP}.dev`)).history.length,
      history,
      "no sync after the uninstall",
    );
    assert.deepEqual(running(bystander), []);
  });

  it("a repository removed from the installation stops on the holder too", async () => {
    const t = await threeReplicas("gh-repo-removed");
    const [receiver] = t.others;
    await receiver.probot.receive(installationRepositoriesEvent("removed", ["acme/shop"]));
    await stoppedEverywhere(t);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await t.leaseHolder(APP), "", "no replica took the repository up again");
  });

  it("a rename keeps state and objects (same id); the old holder stops and the new name runs on one replica", async () => {
    const t = await threeReplicas("gh-rename");
    const [receiver] = t.others;
    const before = await t.live();
    await t.holder.parts.runtimes
      .all()[0]
      ?.reconciler.controller("dev")
      .setFreeze({ by: "alice", reason: "release night" });

    await receiver.probot.receive(repositoryEvent("renamed", { repo: "shop-api", from: "shop" }));
    await eventually(
      "every replica to run the repository under its new name only",
      async () => t.replicas.every((a) => running(a).join() === "acme/shop-api"),
      60_000,
    );
    // The Lease is read only once a replica runs the new name: until the old holder's runtime has
    // finished stopping, the Lease still names it, and the new name may well go to another replica.
    const runningIt = await eventually(
      "a replica to run the new name",
      async () => {
        const r = t.replicas.filter((a) => a.parts.runtimes.all()[0]?.reconciler.active.includes("dev"));
        return r.length > 0 && r;
      },
      60_000,
    );
    assert.equal(runningIt.length, 1, "exactly one replica runs the new name");
    const newHolder = t.identityOf(runningIt[0] as TestApp);
    assert.equal(await t.leaseHolder(APP), newHolder, "the replica running it holds the Lease");

    const after_ = await t.live();
    assert.equal(after_?.metadata.uid, before?.metadata.uid, "the same object, not recreated");
    assert.equal(
      after_?.metadata.annotations?.[TRACKING_ANNOTATION],
      `${APP}.dev:/ConfigMap:${t.ns}/settings`,
    );
    const store = new StateStore(cluster.client, t.stateNs);
    const state = await store.load(`${APP}.dev`);
    assert.equal(state.freeze?.by, "alice", "the freeze set on the old holder carried over");
    assert.ok(state.history.length >= 1, "the history carried over");

    // It deploys under the new name: a push delivered to a replica other than the new holder.
    const runtime = runningIt[0]?.parts.runtimes.all()[0];
    assert.ok(runtime);
    await runtime.reconciler.controller("dev").setFreeze(undefined);
    const c1 = t.repo.head();
    const c2 = t.repo.commit({ "app/cm.yaml": cm("2") });
    const elsewhere = t.replicas.find((a) => a !== runningIt[0]) as TestApp;
    await elsewhere.probot.receive(
      pushEvent({ repo: "shop-api", after: c2, before: c1, modified: ["app/cm.yaml"] }),
    );
    await eventually(
      "the push deployed under the new name",
      async () => (await t.live())?.data?.v === "2",
      60_000,
    );
    await eventually(
      "the sync recorded under the new name",
      async () => (await store.load(`${APP}.dev`)).lastSyncedRevision === c2,
    );
    assert.equal(await t.leaseHolder(APP), newHolder, "the push moved nothing: the same replica holds it");
  });
});
