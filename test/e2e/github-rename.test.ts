// A repository renamed on GitHub keeps what syncward knows of it: GitHub keeps the repository's
// id, which names its state and tracking, so the freeze, the history and the managed objects carry
// over untouched (nothing pruned, deleted, recreated or even re-labelled), and the first sync under
// the new name writes nothing.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TRACKING_ANNOTATION } from "../../src/engine/tracking.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { StateStore } from "../../src/state/store.ts";
import { startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { pushEvent, repoIdOf, repositoryEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const instance = `gh_${repoIdOf("acme/shop")}.dev`;

describe("a repository renamed", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  let stateNs: string;
  let before_: KubeObject | undefined;

  const settings = () => cluster.client.get("v1", "ConfigMap", ns, "settings");

  before(async () => {
    ns = await cluster.namespace("rename");
    stateNs = await cluster.stateNamespace("rename-state");
    repo = makeRepo({
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: '1'}\n",
    });
    const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
`;
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    answerEverything(app.mock, config, repo.dir);
    await app.probot.receive(
      pushEvent({ after: repo.head(), before: "0".repeat(40), modified: ["app/cm.yaml"] }),
    );
    await app.settle();
    const [runtime] = app.parts.runtimes.all();
    await runtime?.reconciler.controller("dev").setFreeze({ by: "alice", reason: "release night" });
    before_ = await settings();
    assert.equal(
      before_?.metadata.annotations?.[TRACKING_ANNOTATION],
      `${instance}:/ConfigMap:${ns}/settings`,
    );
    await app.probot.receive(repositoryEvent("renamed", { repo: "shop-api", from: "shop" }));
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  it("runs under the new name only", () => {
    assert.deepEqual(
      app.parts.runtimes.all().map((r) => `${r.info.owner}/${r.info.repo}`),
      ["acme/shop-api"],
    );
  });

  it("keeps the freeze and the history", async () => {
    const state = await new StateStore(cluster.client, stateNs).load(instance);
    assert.equal(state.freeze?.by, "alice");
    assert.equal(state.freeze?.reason, "release night");
    assert.equal(state.history.length, 1);
  });

  it("keeps the objects as they are: same object, same tracking id (the repository's id)", async () => {
    const after_ = await settings();
    assert.equal(after_?.metadata.uid, before_?.metadata.uid, "not deleted and recreated");
    assert.equal(after_?.metadata.resourceVersion, before_?.metadata.resourceVersion, "not even re-labelled");
    assert.equal(
      after_?.metadata.annotations?.[TRACKING_ANNOTATION],
      `${instance}:/ConfigMap:${ns}/settings`,
    );
    assert.equal(after_?.metadata.labels?.["syncward.dev/instance"], instance);
  });

  it("the first sync under the new name writes nothing and prunes nothing", async () => {
    const controller = app.parts.runtimes.all()[0]?.reconciler.controller("dev");
    const outcome = await controller?.sync({
      trigger: "cli",
      actor: "alice",
      revision: repo.head(),
      ignoreFreeze: true,
    });
    assert.equal(outcome?.phase, "Succeeded", outcome?.message);
    assert.equal(outcome?.writes, 0);
    assert.equal(outcome?.totals.pruned, 0);
    assert.equal((await settings())?.metadata.uid, before_?.metadata.uid);
  });
});
