// Preview environments of pull requests, end to end: the app with GitHub mocked (every request
// checked against GitHub's OpenAPI description) on the real control plane. A labelled pull
// request gets a namespace of its own with its head's objects, a transient deployment with the
// preview's URL and one comment; a push moves it (and prunes what the push removed); closing it
// deletes the namespace and marks the deployment inactive; a fork never gets one, whoever asks;
// and a close webhook that never arrives is caught by the sweep.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { PREVIEW_RECORD_LABEL } from "../../src/state/preview-store.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { takeOpenApiViolations } from "../support/github.ts";
import { closePull, type PreviewApp, type Pull, startPreviewApp, until } from "../support/preview-app.ts";
import { configMap } from "../support/projects.ts";
import { issueCommentEvent, pullRequestEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const prefix = `pv${randomBytes(3).toString("hex")}`;
const previewNs = (n: number) => `${prefix}-pr-${n}`;
const URL_OF = (n: number) => `https://pr-${n}.preview.example`;
/** What the pull request's checks list shows for its preview: an environment's check run. */
const CHECK_OF = (n: number) => `syncward / pr-${n}-dev`;

describe("preview environments of pull requests", () => {
  const repo = makeRepo({ "app/a.yaml": configMap("a"), "app/b.yaml": configMap("b") });
  const pulls = new Map<number, Pull>();
  let app: PreviewApp;
  const exists = (ns: string, name?: string) => app.exists(ns, name);
  const sent = (method: string, path: RegExp) => app.sent(method, path);
  const comments = (n: number) => app.comments(n);

  before(async () => {
    // The state Role is bound to deploy/'s account; this one gets the same rules cluster-wide.
    const stateNamespace = await cluster.namespace("pv-state");
    app = await startPreviewApp({ cluster, repo, pulls, prefix, stateNamespace });
  });

  after(() => app.close());

  it("a labelled pull request gets its own namespace, deployment and comment; a push moves it; closing it tears it down", async () => {
    repo.git("checkout", "-q", "-b", "feature-7", "main");
    const first = repo.commit({ "app/c.yaml": configMap("c") }, "add c");
    pulls.set(7, { state: "open", head: first, branch: "feature-7" });
    await app.probot.receive(
      pullRequestEvent("labeled", { number: 7, headSha: first, headRef: "feature-7", labels: ["preview"] }),
    );
    await until("the preview to sync the head's objects", async () => {
      await app.parts.previews.idle();
      assert.ok(await exists(previewNs(7), "c"), "c (the pull request's) is there");
      assert.ok(await exists(previewNs(7), "b"));
    });
    const quota = await cluster.client.get("v1", "ResourceQuota", previewNs(7), "syncward-preview");
    assert.deepEqual(
      (quota?.spec as { hard?: unknown } | undefined)?.hard,
      { pods: "5" },
      "the operator's quota",
    );
    const deployment = sent("POST", /\/deployments$/).find((b) => b.environment === "pr-7-dev");
    assert.equal(deployment?.transient_environment, true);
    assert.equal(deployment?.production_environment, false);
    assert.equal(deployment?.ref, first);
    await until("a successful deployment status with the URL", async () => {
      const ok = sent("POST", /\/deployments\/\d+\/statuses$/).find((b) => b.state === "success");
      assert.equal(ok?.environment_url, URL_OF(7));
    });
    await until("the preview's check run on the head, completed with the sync's summary", async () => {
      const runs = app.checkRuns(CHECK_OF(7));
      assert.deepEqual(
        runs.map((r) => [r.head_sha, r.status, r.conclusion]),
        [[first, "completed", "success"]],
        "one run, created in progress and completed",
      );
      assert.match(String(runs[0]?.output?.summary), /pr-7-dev/);
    });
    assert.equal(sent("POST", /\/check-runs$/).find((b) => b.name === CHECK_OF(7))?.status, "in_progress");
    assert.equal(sent("POST", /\/issues\/7\/comments$/).length, 1, "one comment, edited in place after");
    assert.match(String(comments(7).at(-1)?.body), /\*\*Live\*\*/);
    assert.match(String(comments(7).at(-1)?.body), new RegExp(URL_OF(7).replaceAll(".", "\\.")));

    // A push removes b: the preview follows the head and prunes it.
    const second = repo.commit({ "app/b.yaml": null }, "drop b");
    pulls.set(7, { state: "open", head: second, branch: "feature-7" });
    await app.probot.receive(
      pullRequestEvent("synchronize", {
        number: 7,
        headSha: second,
        headRef: "feature-7",
        labels: ["preview"],
      }),
    );
    await until("the preview to move to the new head", async () => {
      await app.parts.previews.idle();
      assert.equal(await exists(previewNs(7), "b"), false, "b pruned");
      assert.ok(await exists(previewNs(7), "c"));
    });
    assert.ok(sent("POST", /\/deployments$/).some((b) => b.environment === "pr-7-dev" && b.ref === second));
    await until("a check run of the new head", async () =>
      assert.deepEqual(
        app.checkRuns(CHECK_OF(7)).map((r) => [r.head_sha, r.status, r.conclusion]),
        [
          [first, "completed", "success"],
          [second, "completed", "success"],
        ],
      ),
    );
    assert.equal(sent("POST", /\/issues\/7\/comments$/).length, 1, "still the one comment");

    await app.probot.receive(
      pullRequestEvent("closed", {
        number: 7,
        headSha: second,
        headRef: "feature-7",
        merged: false,
        labels: ["preview"],
      }),
    );
    // GitHub says closed only once the webhook is in: otherwise the 300 ms sweep can see the
    // closed pull request first and tear the preview down for its own reason.
    pulls.set(7, { state: "closed", head: second, branch: "feature-7" });
    await until(
      "the namespace gone and the deployment inactive",
      async () => {
        await app.parts.previews.idle();
        assert.equal(await exists(previewNs(7)), false);
        assert.ok(sent("POST", /\/deployments\/\d+\/statuses$/).some((b) => b.state === "inactive"));
      },
      60_000,
    );
    assert.match(String(comments(7).at(-1)?.body), /\*\*Torn down\*\* \(the pull request closed\)/);
    assert.equal(app.checkRuns(CHECK_OF(7)).length, 2, "the teardown adds no check run");
    const records = await cluster.client.list("v1", "ConfigMap", {
      labelSelector: `${PREVIEW_RECORD_LABEL}=true`,
    });
    assert.equal(
      records.items.filter((r) => r.metadata.namespace === app.parts.runtimes.shared.stateNamespace).length,
      0,
    );
  });

  it("a fork's pull request gets none, labelled or asked for by a maintainer; each reply says why", async () => {
    const head = repo.commit({ "app/d.yaml": configMap("d") }, "fork's change");
    pulls.set(8, { state: "open", head, branch: "feature-8", fork: true });
    await app.probot.receive(
      pullRequestEvent("labeled", {
        number: 8,
        headSha: head,
        headRef: "feature-8",
        fork: true,
        labels: ["preview"],
      }),
    );
    await app.probot.receive(
      issueCommentEvent({ body: "/preview", number: 8, commentId: 8801, sender: { login: "maintainer" } }),
    );
    await app.parts.previews.idle();
    const replies = sent("POST", /\/issues\/8\/comments$/).map((b) => String(b.body));
    assert.equal(
      replies.filter((r) => /forks never get a live preview/.test(r)).length,
      2,
      replies.join("\n---\n"),
    );
    assert.equal(await exists(previewNs(8)), false, "nothing deployed");
    assert.equal(sent("POST", /\/deployments$/).filter((b) => b.environment === "pr-8-dev").length, 0);
  });

  it("a pull request that edits .github/syncward.yml is previewed under the default branch's template", async () => {
    repo.git("checkout", "-q", "-b", "feature-10", "main");
    // The head wants another namespace, URL and TTL for its preview, and a preview of a prod
    // environment it adds: none of it is the config in force.
    const own = stringify({
      environments: [
        { name: "dev", source: { path: "app" }, destination: { namespace: `${prefix}-dev` } },
        { name: "prod", source: { path: "app" }, destination: { namespace: `${prefix}-prod` } },
      ],
      previewEnvironments: [
        { from: "dev", namespace: `${prefix}-pr-mine-{number}`, url: "https://mine.example", ttl: "1s" },
        { from: "prod", namespace: `${prefix}-pr-prod-{number}` },
      ],
    });
    const head = repo.commit({ ".github/syncward.yml": own, "app/f.yaml": configMap("f") }, "my own preview");
    repo.git("checkout", "-q", "main");
    pulls.set(10, { state: "open", head, branch: "feature-10" });
    await app.probot.receive(
      pullRequestEvent("labeled", { number: 10, headSha: head, headRef: "feature-10", labels: ["preview"] }),
    );
    await until("the preview to run the head under the default branch's template", async () => {
      await app.parts.previews.idle();
      assert.ok(await exists(previewNs(10), "f"), "the head's objects, in the default template's namespace");
      assert.match(String(comments(10).at(-1)?.body), /\*\*Live\*\*/);
    });
    assert.equal(await exists(`${prefix}-pr-mine-10`), false, "not the namespace the head asks for");
    assert.equal(await exists(`${prefix}-pr-prod-10`), false, "no preview of the head's own template");
    const body = String(comments(10).at(-1)?.body);
    assert.match(body, new RegExp(`Namespace \`${previewNs(10)}\``));
    assert.match(body, new RegExp(URL_OF(10).replaceAll(".", "\\.")), "the default template's URL");
    assert.doesNotMatch(body, /mine\.example/);
    const environments = sent("POST", /\/deployments$/)
      .filter((b) => String(b.environment).startsWith("pr-10-"))
      .map((b) => b.environment);
    assert.deepEqual([...new Set(environments)], ["pr-10-dev"], "one preview: the default branch's template");
    assert.deepEqual(
      app.checkRuns(CHECK_OF(10)).map((r) => [r.head_sha, r.conclusion]),
      [[head, "success"]],
    );
    await closePull(app, pulls, 10);
    await until(
      "its teardown",
      async () => {
        await app.parts.previews.idle();
        assert.equal(await exists(previewNs(10)), false);
      },
      60_000,
    );
    assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
  });

  it("a preview whose close webhook never arrived is removed by the sweep", async () => {
    repo.git("checkout", "-q", "-b", "feature-9", "main");
    const head = repo.commit({ "app/e.yaml": configMap("e") }, "add e");
    pulls.set(9, { state: "open", head, branch: "feature-9" });
    await app.probot.receive(
      pullRequestEvent("labeled", { number: 9, headSha: head, headRef: "feature-9", labels: ["preview"] }),
    );
    await until("the preview to run", async () => {
      await app.parts.previews.idle();
      assert.ok(await exists(previewNs(9), "e"));
    });
    pulls.set(9, { state: "closed", head, branch: "feature-9" }); // and no webhook
    await until(
      "the sweep to tear it down",
      async () => {
        await app.parts.previews.idle();
        assert.equal(await exists(previewNs(9)), false);
      },
      60_000,
    );
    assert.match(String(comments(9).at(-1)?.body), /\*\*Torn down\*\* \(the pull request closed\)/);
    assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
    assert.deepEqual(
      app.mock.requests.filter((r) => r.url.endsWith("(no match)")),
      [],
    );
  });
});
