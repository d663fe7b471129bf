// A pull request on a Helm chart source, through the GitHub App on the real cluster: the preview
// check run shows what a values change does to the rendered objects, and a broken template fails
// the preview with an annotation at the template's file and line.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mockConfig, mockPull, mockPullFiles, startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo, type TestRepo, testMerge } from "../support/git-repo.ts";
import { type CheckRun, captureCheckRuns, mockTarball } from "../support/github-checks.ts";
import { ensureHelm, fixtureFiles } from "../support/helm.ts";
import { pullRequestEvent } from "../support/webhooks.ts";

const cluster = useCluster();
ensureHelm();

describe("GitHub previews of a Helm chart source", () => {
  let app: TestApp;
  let repo: TestRepo;
  let ns: string;
  const checks: CheckRun[] = [];

  before(async () => {
    ns = await cluster.namespace("gh-helm");
    const stateNs = await cluster.stateNamespace("gh-helm-state");
    repo = makeRepo(fixtureFiles("test/fixtures/helm/web", "web"));
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(
      app.mock,
      `environments:\n  - name: web\n    source: {path: web, helm: {valueFiles: [values-prod.yaml]}}\n    destination: {namespace: ${ns}}\n`,
    );
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  async function previewOf(files: Record<string, string>, number: number): Promise<CheckRun | undefined> {
    const head = repo.commit(files, "change");
    repo.git("reset", "-q", "--hard", "HEAD~1");
    const merge = testMerge(repo, repo.head(), head);
    mockPullFiles(app.mock, number, Object.keys(files));
    mockPull(app.mock, number, { head, mergeCommit: merge });
    mockTarball(app.mock, repo, merge);
    captureCheckRuns(app.mock, checks, 1);
    await app.probot.receive(
      pullRequestEvent("opened", { number, headSha: head, sender: { login: "alice" } }),
    );
    await app.settle();
    app.mock.assertDone();
    return checks.find((c) => c.head_sha === head && c.name === "syncward preview / web");
  }

  it("a values change previews as the rendered difference", async () => {
    const check = await previewOf(
      { "web/values-prod.yaml": "replicaCount: 3\ngreeting: hello from a PR\n" },
      21,
    );
    assert.equal(check?.output?.title, "Preview: 2 to create, 0 to change, 0 to prune");
    const shown = `${check?.output?.summary ?? ""}\n${check?.output?.text ?? ""}`;
    assert.match(shown, /value: hello from a PR/);
    assert.match(shown, /replicas: 3/);
  });

  it("a broken template fails the preview, annotated at the template's file and line", async () => {
    const check = await previewOf(
      { "web/templates/broken.yaml": "a: 1\nb: {{ .Values.nothing.here }}\n" },
      22,
    );
    assert.equal(check?.conclusion, "failure");
    const annotation = check?.output?.annotations?.[0];
    assert.equal(annotation?.path, "web/templates/broken.yaml");
    assert.equal(annotation?.start_line, 2);
  });
});
