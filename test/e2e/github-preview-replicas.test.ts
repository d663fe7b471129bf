// A pull request's preview with the app as two replicas on the real control plane (GitHub mocked,
// every request checked against GitHub's OpenAPI description): both run a Reconciler for the
// preview, its Lease lets one of them sync and report, so the pull request shows one deployment
// per head, one check run per head and one comment, whichever replica a webhook reaches; when the
// replica holding it stops, the other takes the preview up and follows the next push. A preview
// started by a replica already at its share of the apps is taken and synced by the other at once,
// without waiting for a sweep.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { appLeaseName } from "../../src/reconciler/reconciler.ts";
import { previewKey } from "../../src/state/preview-store.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { takeOpenApiViolations } from "../support/github.ts";
import { closePull, type PreviewApp, type Pull, startPreviewApp, until } from "../support/preview-app.ts";
import { configMap } from "../support/projects.ts";
import { pullRequestEvent, repoIdOf } from "../support/webhooks.ts";

const cluster = useCluster();
const prefix = `pr${randomBytes(3).toString("hex")}`;
const ns = `${prefix}-pr-30`;
const KEY = previewKey("acme/shop", 30, "dev");
const CHECK = "syncward / pr-30-dev";

describe("a preview with the app as two replicas", () => {
  const repo = makeRepo({ "app/a.yaml": configMap("a") });
  const pulls = new Map<number, Pull>();
  const apps: PreviewApp[] = [];

  after(async () => {
    // The first app's mock answers for both: it is forgotten last.
    for (const app of apps.reverse()) await app.close();
  });

  /** The replicas that sync the preview now (hold its Lease). */
  const writers = () => apps.filter((a) => a.parts.previews.syncing().includes(KEY));
  /** Everything GitHub was sent, by either replica (the first app's mock answers both). */
  const sent = (method: string, path: RegExp) => (apps[0] as PreviewApp).sent(method, path);
  const deploymentsOf = (sha: string) =>
    sent("POST", /\/deployments$/).filter((b) => b.environment === "pr-30-dev" && b.ref === sha);
  const push = async (to: PreviewApp, files: Record<string, string>) => {
    repo.git("checkout", "-q", "feature-30");
    const head = repo.commit(files, "change");
    repo.git("checkout", "-q", "main");
    pulls.set(30, { state: "open", head, branch: "feature-30" });
    await to.probot.receive(
      pullRequestEvent("synchronize", {
        number: 30,
        headSha: head,
        headRef: "feature-30",
        labels: ["preview"],
      }),
    );
    return head;
  };
  /** Synced and reported once: its object there, one deployment and one completed check run of `sha`. */
  const deployed = (sha: string, object: string) =>
    until(
      `${sha.slice(0, 7)} deployed and reported once`,
      async () => {
        for (const a of apps) await a.parts.previews.idle();
        assert.ok(await cluster.client.get("v1", "ConfigMap", ns, object), `${object} is there`);
        assert.equal(deploymentsOf(sha).length, 1, "one deployment of the head");
        const runs = (apps[0] as PreviewApp).checkRuns(CHECK).filter((r) => r.head_sha === sha);
        assert.deepEqual(
          runs.map((r) => [r.status, r.conclusion]),
          [["completed", "success"]],
          "one check run of the head",
        );
      },
      90_000,
    );

  it("one replica syncs and reports the preview; the other takes it up when that one stops", async () => {
    const stateNamespace = await cluster.namespace("prr-state");
    const options = { cluster, repo, pulls, prefix, stateNamespace };
    apps.push(await startPreviewApp({ ...options, identity: "replica-a" }));
    const [a] = apps as [PreviewApp];
    repo.git("checkout", "-q", "-b", "feature-30", "main");
    const first = repo.commit({ "app/c1.yaml": configMap("c1") }, "add c1");
    repo.git("checkout", "-q", "main");
    pulls.set(30, { state: "open", head: first, branch: "feature-30" });
    await a.probot.receive(
      pullRequestEvent("labeled", { number: 30, headSha: first, headRef: "feature-30", labels: ["preview"] }),
    );
    await deployed(first, "c1");

    // A second replica starts (a rolling update): it finds the live preview in the records.
    apps.push(await startPreviewApp({ ...options, identity: "replica-b" }));
    const [, b] = apps as [PreviewApp, PreviewApp];
    await until("both replicas to run the preview, one syncing it", async () => {
      assert.equal(writers().length, 1, "one writer");
      await b.parts.previews.idle();
    });
    // A push GitHub delivers to either replica is synced and reported by the writer, once.
    const second = await push(b, { "app/c2.yaml": configMap("c2") });
    await deployed(second, "c2");
    assert.equal(writers().length, 1, "still one writer");
    assert.equal(sent("POST", /\/issues\/30\/comments$/).length, 1, "one comment, edited in place");

    // The writer stops (its pod goes): the other replica takes the preview up.
    const holder = writers()[0] as PreviewApp;
    const other = holder === a ? b : a;
    await holder.parts.previews.stop();
    await holder.parts.runtimes.stop();
    await until(
      "the other replica to take the preview up",
      async () => {
        assert.deepEqual(writers(), [other]);
      },
      60_000,
    );
    const third = await push(other, { "app/c3.yaml": configMap("c3") });
    await deployed(third, "c3");
    assert.equal(sent("POST", /\/issues\/30\/comments$/).length, 1, "still the one comment");
    assert.match(String(a.comments(30).at(-1)?.body), /\*\*Live\*\*/);

    await closePull(other, pulls, 30);
    await until(
      "the preview torn down",
      async () => {
        await other.parts.previews.idle();
        assert.equal(await cluster.client.get("v1", "Namespace", undefined, ns), undefined);
      },
      60_000,
    );
    assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
    assert.deepEqual(
      a.mock.requests.filter((r) => r.url.endsWith("(no match)")),
      [],
    );
  });

  it("a preview started by the replica at its share of the apps is synced by the other at once, with no sweep", async () => {
    for (const app of apps.splice(0).reverse()) await app.close();
    const stateNamespace = await cluster.namespace("prr-share");
    // No sweep: the other replica may learn of the preview only from its start.
    const options = { cluster, repo, pulls, prefix, stateNamespace, sweepMs: 0 };
    apps.push(await startPreviewApp({ ...options, identity: "replica-c" }));
    apps.push(await startPreviewApp({ ...options, identity: "replica-d" }));
    const [c, d] = apps as [PreviewApp, PreviewApp];
    const number = 42;
    const key = previewKey("acme/shop", number, "dev");
    repo.git("checkout", "-q", "-b", "feature-42", "main");
    const head = repo.commit({ "app/c42.yaml": configMap("c42") }, "add c42");
    repo.git("checkout", "-q", "main");
    pulls.set(number, { state: "open", head, branch: "feature-42" });
    // The repository starts (a pull request opened without the label) and one replica takes its
    // app: with two members and, soon, two apps, that replica is at its share of one.
    await c.probot.receive(pullRequestEvent("opened", { number, headSha: head, headRef: "feature-42" }));
    const repoLease = appLeaseName(`gh_${repoIdOf("acme/shop")}`);
    let holder = "";
    await until("a replica to hold the repository's app", async () => {
      const lease = await cluster.client.get("coordination.k8s.io/v1", "Lease", stateNamespace, repoLease);
      holder = String((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? "");
      assert.match(holder, /^replica-[cd]$/);
    });
    const [starter, other] = holder === "replica-c" ? [c, d] : [d, c];
    /** Only the other replica syncs the preview, and its objects are there. */
    const syncedByOther = (what: string) =>
      until(
        what,
        async () => {
          for (const a of apps) await a.parts.previews.idle();
          assert.deepEqual(
            apps.filter((a) => a.parts.previews.syncing().includes(key)),
            [other],
          );
          assert.ok(
            await cluster.client.get("v1", "ConfigMap", `${prefix}-pr-${number}`, "c42"),
            "c42 is there",
          );
        },
        30_000,
      );
    // The label reaches the replica at its share: it starts the preview and leaves it to the other.
    await starter.probot.receive(
      pullRequestEvent("labeled", { number, headSha: head, headRef: "feature-42", labels: ["preview"] }),
    );
    await syncedByOther("the other replica to sync the preview");
    const previewLease = appLeaseName(`gh_${repoIdOf("acme/shop")}-pr-${number}-dev`);
    // Torn down on both: the namespace gone, and neither replica runs it or holds its Lease (the
    // other one stops it when its Lease is deleted, and never makes it again).
    const tornDown = () =>
      until(
        "the preview torn down on both replicas",
        async () => {
          for (const a of apps) await a.parts.previews.idle();
          assert.equal(
            await cluster.client.get("v1", "Namespace", undefined, `${prefix}-pr-${number}`),
            undefined,
          );
          assert.deepEqual(
            apps.filter((a) => a.parts.previews.syncing().includes(key)),
            [],
          );
          assert.equal(
            await cluster.client.get("coordination.k8s.io/v1", "Lease", stateNamespace, previewLease),
            undefined,
            "no Lease of the preview is left",
          );
        },
        30_000,
      );
    // The label taken off and put back: the same preview starts again on the same replica, and
    // the other hears of it again (its Lease was deleted and is made again).
    await starter.probot.receive(
      pullRequestEvent("unlabeled", {
        number,
        headSha: head,
        headRef: "feature-42",
        labels: [],
        label: "preview",
      }),
    );
    await tornDown();
    await starter.probot.receive(
      pullRequestEvent("labeled", { number, headSha: head, headRef: "feature-42", labels: ["preview"] }),
    );
    await syncedByOther("the other replica to sync the preview started again");
    await closePull(other, pulls, number);
    await tornDown();
  });
});
