// How a live preview follows its pull request, end to end (the app with GitHub mocked and checked
// against GitHub's OpenAPI description, on the real control plane, polling on as in production): an idle preview asks GitHub nothing (the sweep's read of its pull request aside);
// a head that moved without a webhook is followed at the next sweep; a push brings back the
// operator's quota someone deleted; each head's deployment goes in progress, then success or
// failure (a head that does not render); a push by someone without write is not followed, nor is
// a writer's push on top of it, until that commit leaves the branch, nor when the pull request's
// base is moved to a branch at that commit; and `/preview` on a live
// preview or `/preview stop` without one each get a reply.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { takeOpenApiViolations } from "../support/github.ts";
import {
  closePull,
  labelPull,
  type PreviewApp,
  type Pull,
  startPreviewApp,
  until,
} from "../support/preview-app.ts";
import { configMap } from "../support/projects.ts";
import { issueCommentEvent, pullRequestEvent } from "../support/webhooks.ts";

const cluster = useCluster();
const prefix = `pf${randomBytes(3).toString("hex")}`;
const previewNs = (n: number) => `${prefix}-pr-${n}`;

describe("a live preview follows its pull request", () => {
  const repo = makeRepo({ "app/a.yaml": configMap("a") });
  const pulls = new Map<number, Pull>();
  const pushes: Array<{ branch: string; after: string; login: string }> = [];
  let app: PreviewApp;

  before(async () => {
    const stateNamespace = await cluster.namespace("pf-state");
    app = await startPreviewApp({
      cluster,
      repo,
      pulls,
      prefix,
      stateNamespace,
      // Environments poll their branch (every 5 minutes in production); previews must not.
      pollIntervalMs: 200,
      readers: ["eve"],
      pushes,
    });
  });

  after(() => app.close());

  const comment = (n: number) => String(app.comments(n).at(-1)?.body);
  /** Pull request `n` from its own branch with one ConfigMap of its own, labelled `preview`. */
  const open = async (n: number) => {
    const head = await labelPull(app, repo, pulls, n);
    await until(`the preview of #${n} to be live`, async () => {
      await app.parts.previews.idle();
      assert.ok(await app.exists(previewNs(n), `c${n}`));
      assert.match(comment(n), /\*\*Live\*\*/);
    });
    return head;
  };
  /** A commit on pull request `n`'s branch (by `login`, told in the webhook unless `webhook` is false). */
  const push = async (
    n: number,
    files: Record<string, string | null>,
    o: { login?: string; webhook?: boolean } = {},
  ) => {
    const pr = pulls.get(n) as Pull;
    repo.git("checkout", "-q", pr.branch);
    const head = repo.commit(files, "change");
    repo.git("checkout", "-q", "main");
    pulls.set(n, { ...pr, head });
    if (o.login && o.login !== "octocat") pushes.push({ branch: pr.branch, after: head, login: o.login });
    if (o.webhook !== false)
      await app.probot.receive(
        pullRequestEvent("synchronize", {
          number: n,
          headSha: head,
          headRef: pr.branch,
          labels: ["preview"],
          author: "octocat",
          sender: { login: o.login ?? "octocat" },
        }),
      );
    return head;
  };
  /** The deployment statuses of `sha`'s deployment to pull request `n`'s preview, in order. */
  const statusesOf = (n: number, sha: string) => {
    const posts = app.mock.requests.filter((r) => r.method === "POST" && /\/deployments/.test(r.url));
    const created = posts.flatMap((r, i) => {
      const body = r.body as { environment?: string; ref?: string };
      return /\/deployments$/.test(r.url) && body.environment === `pr-${n}-dev` && body.ref === sha
        ? [i]
        : [];
    });
    assert.equal(created.length, 1, `one deployment of ${sha.slice(0, 7)}`);
    // Its id is the one its first status (in progress, sent right after it) is posted to.
    const first = posts.slice((created[0] as number) + 1).find((r) => /\/statuses$/.test(r.url));
    const id = first?.url.match(/\/deployments\/(\d+)\/statuses$/)?.[1];
    return posts
      .filter((r) => id !== undefined && r.url.endsWith(`/deployments/${id}/statuses`))
      .map((r) => (r.body as { state: string }).state);
  };

  it("an idle preview asks GitHub nothing, with polling on", async () => {
    await open(40);
    await app.parts.previews.idle();
    const from = app.mock.requests.length;
    const sweeps = () =>
      app.mock.requests.slice(from).filter((r) => r.method === "GET" && /\/pulls\/40$/.test(r.url)).length;
    // Three sweeps at 300 ms with the app's polls at 200 ms: time in which a polling preview
    // would have passed a dozen times.
    await until("three sweeps", async () => assert.ok(sweeps() >= 3, `${sweeps()} sweeps`));
    await app.parts.previews.idle();
    const others = app.mock.requests
      .slice(from)
      .filter((r) => !(r.method === "GET" && /\/pulls\/40$/.test(r.url)));
    assert.deepEqual(
      others.map((r) => `${r.method} ${r.url}`),
      [],
      "nothing but the sweep's read of the pull request",
    );
  });

  it("a push whose webhook never came is followed at the next sweep", async () => {
    const head = await push(40, { "app/lost.yaml": configMap("lost") }, { webhook: false });
    await until("the preview to run the new head", async () => {
      await app.parts.previews.idle();
      assert.ok(await app.exists(previewNs(40), "lost"), "the pushed object is there");
      assert.match(comment(40), new RegExp(`\\*\\*Live\\*\\* at \`${head.slice(0, 7)}\``));
    });
  });

  it("a push brings back the operator's quota someone deleted", async () => {
    await cluster.client.delete(
      {
        apiVersion: "v1",
        group: "",
        kind: "ResourceQuota",
        name: "syncward-preview",
        namespace: previewNs(40),
      },
      "background",
    );
    assert.equal(
      await cluster.client.get("v1", "ResourceQuota", previewNs(40), "syncward-preview"),
      undefined,
    );
    await push(40, { "app/q.yaml": configMap("q") });
    await until("the quota to be there again", async () => {
      await app.parts.previews.idle();
      const quota = await cluster.client.get("v1", "ResourceQuota", previewNs(40), "syncward-preview");
      assert.deepEqual((quota?.spec as { hard?: unknown } | undefined)?.hard, { pods: "5" });
    });
  });

  it("each head's deployment goes in progress, then success, or failure for a head that does not render", async () => {
    const broken = await push(40, { "app/broken.yaml": "a: [" });
    await until("the broken head's deployment to fail", async () => {
      await app.parts.previews.idle();
      assert.deepEqual(statusesOf(40, broken), ["in_progress", "failure"]);
      assert.match(comment(40), /\*\*Failed\*\*/);
    });
    const fixed = await push(40, { "app/broken.yaml": null, "app/fixed.yaml": configMap("fixed") });
    await until("the fixed head's deployment to succeed", async () => {
      await app.parts.previews.idle();
      assert.deepEqual(statusesOf(40, fixed), ["in_progress", "success"]);
      assert.ok(await app.exists(previewNs(40), "fixed"));
      assert.match(comment(40), /\*\*Live\*\*/);
    });
  });

  it("a push by someone without write is not followed, nor a writer's on top of it, until that commit leaves the branch", async () => {
    const before = await open(41);
    const eves = await push(41, { "app/eve.yaml": configMap("eve") }, { login: "eve" });
    await until("the comment to say why the preview does not follow", async () => {
      await app.parts.previews.idle();
      assert.match(comment(41), /\*\*Not following\*\* the push of `[0-9a-f]{7}`: .*@eve \(read\)/);
    });
    assert.ok(comment(41).includes(eves.slice(0, 7)));
    await push(41, { "app/later.yaml": configMap("later") }, { login: "octocat" });
    await app.parts.previews.idle();
    assert.match(comment(41), /@eve \(read\)/, "still not following: eve's commit is in the head's history");
    assert.equal(await app.exists(previewNs(41), "eve"), false, "eve's object never ran");
    assert.equal(await app.exists(previewNs(41), "later"), false);
    assert.match(comment(41), new RegExp(`stays at \`${before.slice(0, 7)}\``));

    // A writer drops eve's commit from the branch (a force push): the preview follows again.
    const pr = pulls.get(41) as Pull;
    repo.git("checkout", "-q", pr.branch);
    repo.git("reset", "-q", "--hard", before);
    repo.git("checkout", "-q", "main");
    pulls.set(41, { ...pr, head: before });
    const clean = await push(41, { "app/clean.yaml": configMap("clean") });
    await until("the preview to follow the clean head", async () => {
      await app.parts.previews.idle();
      assert.ok(await app.exists(previewNs(41), "clean"));
      assert.match(comment(41), new RegExp(`\\*\\*Live\\*\\* at \`${clean.slice(0, 7)}\``));
    });
    assert.doesNotMatch(comment(41), /Not following/);
    assert.equal(await app.exists(previewNs(41), "eve"), false);
  });

  it("moving the pull request's base to a branch at a commit pushed without write hides nothing: neither a writer's push on top nor /preview deploys it", async () => {
    const before = await open(43);
    const eves = await push(43, { "app/eve43.yaml": configMap("eve43") }, { login: "eve" });
    await until("the comment to say why the preview does not follow", async () => {
      await app.parts.previews.idle();
      assert.match(comment(43), /\*\*Not following\*\*.*@eve \(read\)/);
    });
    // A writer makes a branch at eve's commit and makes it the pull request's base (an `edited`
    // webhook, which previews do not act on): the pull request's own list of commits no longer has it.
    repo.git("branch", "evil-base-43", eves);
    pulls.set(43, { ...(pulls.get(43) as Pull), base: "evil-base-43" });
    await push(43, { "app/on-top43.yaml": configMap("on-top43") }, { login: "octocat" });
    await app.probot.receive(
      issueCommentEvent({ body: "/preview", number: 43, commentId: 4301, sender: { login: "alice" } }),
    );
    await app.parts.previews.idle();
    assert.match(comment(43), /\*\*Not following\*\*.*@eve \(read\)/, "eve's commit is still in the head");
    assert.match(comment(43), new RegExp(`stays at \`${before.slice(0, 7)}\``));
    assert.equal(await app.exists(previewNs(43), "eve43"), false, "eve's object never ran");
    assert.equal(await app.exists(previewNs(43), "on-top43"), false);
  });

  it("/preview on a live preview and /preview stop without one each get a reply", async () => {
    const replies = (n: number) =>
      app.sent("POST", new RegExp(`/issues/${n}/comments$`)).map((b) => String(b.body));
    await app.probot.receive(
      issueCommentEvent({ body: "/preview", number: 40, commentId: 4001, sender: { login: "alice" } }),
    );
    await app.parts.previews.idle();
    assert.ok(
      replies(40).some((r) => /^@alice, this pull request's preview is already running/.test(r)),
      replies(40).join("\n---\n"),
    );
    pulls.set(42, { state: "open", head: repo.head(), branch: "main" });
    await app.probot.receive(
      issueCommentEvent({ body: "/preview stop", number: 42, commentId: 4201, sender: { login: "alice" } }),
    );
    await app.parts.previews.idle();
    assert.deepEqual(replies(42), ["@alice, this pull request has no preview to stop."]);
  });

  it("leaves nothing when the pull requests close", async () => {
    await closePull(app, pulls, 40);
    await closePull(app, pulls, 41);
    await closePull(app, pulls, 43);
    await until(
      "the namespaces gone",
      async () => {
        await app.parts.previews.idle();
        assert.equal(await app.exists(previewNs(40)), false);
        assert.equal(await app.exists(previewNs(41)), false);
        assert.equal(await app.exists(previewNs(43)), false);
      },
      60_000,
    );
    assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
    assert.deepEqual(
      app.mock.requests.filter((r) => r.url.endsWith("(no match)")).map((r) => r.url),
      [],
    );
  });
});
