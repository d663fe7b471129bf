// Uninstalled and installed again: GitHub gives the installation a new id. The next push carries
// it, and syncward deploys with tokens of the new installation from then on (before, every GitHub
// call kept asking for the old one and failed until a restart).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { installationEvent, pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "${v}"}\n`;

describe("a reinstall", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  /** The installation id of every token asked for, in order. */
  const asked: Array<number | undefined> = [];
  const live = async () =>
    ((await cluster.client.get("v1", "ConfigMap", ns, "settings")) as { data?: { v?: string } } | undefined)
      ?.data?.v;

  before(async () => {
    ns = await cluster.namespace("reinstall");
    const stateNs = await cluster.stateNamespace("reinstall-state");
    repo = makeRepo({ "app/cm.yaml": cm("1") });
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    const auth = app.probot.auth.bind(app.probot);
    app.probot.auth = ((id?: number) => {
      asked.push(id);
      return auth(id);
    }) as typeof app.probot.auth;
    answerEverything(
      app.mock,
      `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
`,
      repo.dir,
    );
    await app.probot.receive(
      pushEvent({ after: repo.head(), before: "0".repeat(40), modified: ["app/cm.yaml"], installationId: 1 }),
    );
    await app.settle();
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  it("deploys under the first installation", async () => {
    assert.equal(await live(), "1");
    assert.ok(asked.includes(1));
    assert.ok(!asked.includes(2));
  });

  it("after an uninstall and a reinstall whose events were missed, a push deploys with the new installation's tokens", async () => {
    // The process was down while the app was uninstalled and installed again: only the push tells.
    assert.equal(app.parts.runtimes.all()[0]?.info.installationId, 1);
    const second = repo.commit({ "app/cm.yaml": cm("2") }, "after the reinstall");
    const from = asked.length;
    await app.probot.receive(
      pushEvent({
        after: second,
        before: repo.git("rev-parse", "HEAD~1").trim(),
        modified: ["app/cm.yaml"],
        installationId: 2,
      }),
    );
    await app.settle();
    assert.equal(await live(), "2", "the push after the reinstall deployed");
    const since = asked.slice(from).filter((id) => id !== undefined);
    assert.ok(since.length > 0, "GitHub was asked for tokens");
    assert.deepEqual([...new Set(since)], [2], "only the new installation's tokens");
  });

  it("an uninstall stops the repository", async () => {
    await app.probot.receive(installationEvent("deleted", { installationId: 2 }));
    assert.equal(app.parts.runtimes.all().length, 0);
  });
});
