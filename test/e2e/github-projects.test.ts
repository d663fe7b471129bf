// The app under the operator's projects, on the real cluster: a push of a repository whose
// config reaches outside its project applies nothing, and its check run names the project and
// the rule; the same repository inside its project's namespaces syncs, its check run naming the
// project too.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { REPO_PATH, startApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { configMap, teamA } from "../support/projects.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

interface CheckRun {
  name: string;
  head_sha: string;
  conclusion?: string;
  output?: { title: string; summary: string };
}

/** acme/shop (the webhook examples' repository) deploys app/ to `ns`; its project is team-a. */
async function pushUnderTeamA(ns: string) {
  const state = await cluster.stateNamespace("gh-proj-state");
  const repo = makeRepo({ "app/settings.yaml": configMap("settings") });
  const head = repo.head();
  const app = await startApp({
    client: cluster.syncwardClient,
    stateNamespace: state,
    projects: stringify({ projects: [teamA({ repositories: ["acme/shop"] })] }),
  });
  const config = stringify({
    environments: [
      { name: "dev", source: { path: "app" }, destination: { namespace: ns }, syncPolicy: { automated: {} } },
    ],
  });
  answerEverything(app.mock, config, repo.dir);
  // acme/shop is listed by name: its id is read once and pinned in the state namespace.
  app.mock.api.persist().get(REPO_PATH).reply(200, { id: 1296269, name: "shop", full_name: "acme/shop" });
  try {
    await app.probot.receive(
      pushEvent({ after: head, before: "0".repeat(40), modified: ["app/settings.yaml"] }),
    );
    await app.settle();
    const completed = app.mock.requests
      .filter((r) => /\/check-runs(\/\d+)?$/.test(r.url) && (r.body as CheckRun | undefined)?.conclusion)
      .map((r) => r.body as CheckRun);
    return completed.at(-1);
  } finally {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  }
}

describe("the app under the operator's projects", () => {
  it("a push whose config reaches outside the project applies nothing; the check run names the project and the rule", async () => {
    const ns = await cluster.namespace("team-b");
    const run = await pushUnderTeamA(ns);
    assert.equal(run?.conclusion, "failure", JSON.stringify(run));
    assert.match(run?.output?.summary ?? "", /^- \*\*Project:\*\* `team-a`$/m);
    assert.match(
      run?.output?.summary ?? "",
      new RegExp(
        `refused by the operator's project: environment dev: destination\\.namespace "${ns}" is outside project team-a`,
      ),
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined, "nothing applied");
  });

  it("inside the project's namespaces it syncs, and the check run names the project", async () => {
    const ns = await cluster.namespace("team-a");
    const run = await pushUnderTeamA(ns);
    assert.equal(run?.conclusion, "success", JSON.stringify(run));
    assert.match(run?.output?.summary ?? "", /^- \*\*Project:\*\* `team-a`$/m);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "settings"));
  });
});
