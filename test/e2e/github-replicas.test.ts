// Two instances of the GitHub App as two replicas on the real cluster, one state namespace: the
// replica that holds the repository's Lease syncs; a push GitHub delivers to the other one reaches
// it through the API server (the environment's state ConfigMap) and is deployed and reported as
// that push, though the holder had no webhook and does not poll; a config change pushed to the
// other one is read again by the holder, which then runs the new config.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TestApp } from "../support/app.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { FakeGitHub } from "../support/github-fake.ts";
import { Replicas, runTestRepository } from "../support/replicas.ts";
import { pushEvent, repoIdOf, userIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
/** The app of acme/shop: its GitHub id (a rename keeps it). */
const APP = `gh_${repoIdOf("acme/shop")}`;
const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("the app as two replicas", () => {
  let repo: TestRepo;
  let github: FakeGitHub;
  let ns: string;
  let stateNs: string;

  const live = async (namespace = ns) =>
    (
      (await cluster.client.get("v1", "ConfigMap", namespace, "settings")) as
        | { data?: { v?: string } }
        | undefined
    )?.data?.v;
  const config = (namespace: string, extra = "") => `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${namespace}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
${extra}`;

  let replicas: Replicas;
  const replica = (identity: string) => replicas.start(identity);

  before(async () => {
    ns = await cluster.namespace("ghrep");
    stateNs = await cluster.stateNamespace("ghrep-state");
    repo = makeRepo({ "app/cm.yaml": cm("1") });
    github = new FakeGitHub(repo, config(ns));
    replicas = new Replicas(cluster.syncwardKubeconfig, stateNs, github);
  });

  after(() => replicas.stop());

  it("a push delivered to the replica without the Lease is deployed by the one with it", async () => {
    const a = await replica("replica-a");
    const c1 = repo.head();
    await a.probot.receive(pushEvent({ after: c1, modified: ["app/cm.yaml"], sender: { login: "alice" } }));
    await eventually("replica-a to take the repository and deploy it", async () => (await live()) === "1");

    const b = await replica("replica-b");
    // B starts the installed repository as a restarted pod does (bootstrap), and finds it held.
    const rtB = await runTestRepository(b);
    await eventually("replica-b to stand by", async () => rtB.reconciler.following);
    // Let replica-a's own passes (the watch's echo of its first apply) finish, so the push's pass
    // is not folded into one of them.
    await new Promise((r) => setTimeout(r, 1000));
    await a.settle();

    const c2 = repo.commit({ "app/cm.yaml": cm("2") });
    await b.probot.receive(
      pushEvent({ after: c2, before: c1, modified: ["app/cm.yaml"], sender: { login: "bob" } }),
    );
    await eventually("the push deployed by replica-a", async () => (await live()) === "2");
    const rtA = a.parts.runtimes.all()[0];
    assert.ok(rtA);
    const state = await eventually("recorded by replica-a", async () => {
      const s = await rtA.reconciler.store.load(`${APP}.dev`);
      return s.lastSyncedRevision === c2 ? s : undefined;
    });
    assert.deepEqual(
      [state.history.at(-1)?.trigger, state.history.at(-1)?.actor],
      ["push", "bob"],
      "synced as bob's push",
    );
    assert.deepEqual(
      state.recentPushes?.find((p) => p.after === c2),
      { after: c2, before: c1, login: "bob", id: userIdOf("bob") },
      "the replica that received the push kept who pushed it, by id, in the state the holder reads",
    );
    assert.deepEqual(rtB.reconciler.active, [], "replica-b wrote nothing");
    await a.settle();
    assert.ok(
      github.deployments.some((d) => d.ref === c2 && d.environment === "dev"),
      "the holder reported the deployment to GitHub",
    );
  });

  it("a config change pushed to the replica without the Lease is run by the one with it", async () => {
    const [a, b] = replicas.apps as [TestApp, TestApp];
    const extraNs = await cluster.namespace("ghrep-extra");
    // A second environment appears in the config; only replica-b is told.
    github.config = config(
      ns,
      `  - name: extra
    source: {path: app}
    destination: {namespace: ${extraNs}}
    syncPolicy: {automated: {prune: true}, retry: {limit: 0}}
`,
    );
    const before = repo.head();
    const c3 = repo.commit({ ".github/syncward.yml": github.config });
    await b.probot.receive(
      pushEvent({ after: c3, before, modified: [".github/syncward.yml"], sender: { login: "carol" } }),
    );
    await eventually("the new environment deployed", async () => (await live(extraNs)) === "2", 60_000);
    const holder = await eventually("one replica running the new config", async () =>
      [a, b].find((x) => x.parts.runtimes.all()[0]?.reconciler.active.includes("extra")),
    );
    const rt = holder.parts.runtimes.all()[0];
    assert.ok(rt);
    assert.deepEqual(rt.reconciler.active.sort(), ["dev", "extra"]);
    const other = holder === a ? b : a;
    assert.deepEqual(other.parts.runtimes.all()[0]?.reconciler.active ?? [], []);
    assert.deepEqual(
      other.parts.runtimes.all()[0]?.config.environments.map((e) => e.name),
      ["dev", "extra"],
      "the replica without the Lease read the new config too",
    );
  });
});
