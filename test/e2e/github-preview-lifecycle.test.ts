// Preview environments through the rest of their lives, end to end (the app with GitHub mocked
// and checked against GitHub's OpenAPI description, on the real control plane): a pull request
// beyond the operator's per-repository limit waits, says so in its comment and starts when the
// live one closes; removing the label or `/preview stop` ends a preview and the comment says why;
// a teardown the app was stopped in the middle of is finished by the next instance, through the
// cluster the preview's record names (not the app's own); and a preview
// whose pull request has not moved for its time to live is torn down by the sweep. A merge tears
// everything down, the preview's state and Lease in syncward's namespace included; a teardown
// whose cluster does not answer is retried and said on the comment, and finishes when it answers;
// and a GitHub failure just after the namespace is made leaves nothing behind.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { KubeClient } from "../../src/kube/client.ts";
import { PREVIEW_CLAIM_ANNOTATION, PREVIEW_LABEL } from "../../src/reconciler/preview-namespace.ts";
import { appLeaseName } from "../../src/reconciler/reconciler.ts";
import { githubAppId, instanceName } from "../../src/state/identity.ts";
import { PREVIEW_RECORD_LABEL, PreviewStore, previewKey } from "../../src/state/preview-store.ts";
import { stateConfigMapName } from "../../src/state/store.ts";
import { REPO_PATH } from "../support/app.ts";
import { kubectl, useCluster } from "../support/cluster.ts";
import { cuttableProxy } from "../support/cuttable-proxy.ts";
import { makeRepo } from "../support/git-repo.ts";
import { takeOpenApiViolations } from "../support/github.ts";
import {
  closePull,
  labelPull,
  type PreviewApp,
  type PreviewAppOptions,
  type Pull,
  previewRules,
  startPreviewApp,
  stateRules,
  until,
} from "../support/preview-app.ts";
import { configMap } from "../support/projects.ts";
import {
  DEFAULT_INSTALLATION_ID,
  installationRepositoriesEvent,
  issueCommentEvent,
  pullRequestEvent,
  repoIdOf,
} from "../support/webhooks.ts";

const cluster = useCluster();
const prefix = `pl${randomBytes(3).toString("hex")}`;
const previewNs = (n: number) => `${prefix}-pr-${n}`;
const URL_OF = (n: number) => `https://pr-${n}.preview.example`;
/** A finalizer of the operator's on the namespace (or none): it cannot go while one is there. */
const hold = (ns: string, on: boolean) =>
  kubectl([
    "patch",
    "namespace",
    ns,
    "--type=merge",
    "-p",
    JSON.stringify({ metadata: { finalizers: on ? ["syncward.test/hold"] : null } }),
  ]);

describe("the lives of preview environments", () => {
  const repo = makeRepo({ "app/a.yaml": configMap("a") });
  const pulls = new Map<number, Pull>();

  const open = async (o: Partial<PreviewAppOptions> = {}) =>
    startPreviewApp({
      cluster,
      repo,
      pulls,
      prefix,
      stateNamespace: o.stateNamespace ?? (await cluster.namespace("pl-state")),
      ...o,
    });
  /** Pull request `n` from its own branch with one ConfigMap of its own, labelled `preview`. */
  const label = (app: PreviewApp, n: number) => labelPull(app, repo, pulls, n);
  const close = (app: PreviewApp, n: number) => closePull(app, pulls, n);
  /** The preview comment of pull request `n` as it reads now. */
  const comment = (app: PreviewApp, n: number) => String(app.comments(n).at(-1)?.body);
  const statusPosts = (app: PreviewApp) =>
    app.mock.requests.filter((r) => r.method === "POST" && /\/deployments\/\d+\/statuses$/.test(r.url));
  /**
   * The states of the deployment statuses `app` sent for pull request `n`'s preview: of the
   * deployments whose statuses carry its URL in what `started` (the instance that deployed it) sent.
   */
  const statuses = (app: PreviewApp, n: number, started = app) => {
    const ids = new Set(
      statusPosts(started)
        .filter((r) => (r.body as { environment_url?: string }).environment_url === URL_OF(n))
        .map((r) => r.url),
    );
    return statusPosts(app)
      .filter((r) => ids.has(r.url))
      .map((r) => (r.body as { state: string }).state);
  };
  const live = (app: PreviewApp, n: number) =>
    until(`the preview of #${n} to be live`, async () => {
      await app.parts.previews.idle();
      assert.ok(await app.exists(previewNs(n), `c${n}`), "the pull request's object is there");
      assert.ok(statuses(app, n).includes("success"), "its deployment succeeded");
      assert.match(comment(app, n), /\*\*Live\*\*/);
    });
  const gone = (app: PreviewApp, n: number, started = app) =>
    until(
      `the preview of #${n} to be torn down`,
      async () => {
        await app.parts.previews.idle();
        assert.equal(await app.exists(previewNs(n)), false, "the namespace is deleted");
        assert.equal(statuses(app, n, started).at(-1), "inactive", "the deployment ends inactive");
        assert.match(comment(app, n), /\*\*Torn down\*\*/);
      },
      60_000,
    );
  const records = async (stateNamespace: string) =>
    (
      await cluster.client.list("v1", "ConfigMap", {
        namespace: stateNamespace,
        labelSelector: `${PREVIEW_RECORD_LABEL}=true`,
      })
    ).items.length;
  /** What GitHub would have refused, and what the app asked that the mock does not know. */
  const clean = (app: PreviewApp) => {
    assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
    assert.deepEqual(
      app.mock.requests.filter((r) => r.url.endsWith("(no match)")),
      [],
    );
  };

  it("beyond the operator's per-repository limit a labelled pull request waits, says so, and starts when the live one closes", async () => {
    const stateNamespace = await cluster.namespace("pl-state");
    const app = await open({ stateNamespace, limits: { maxPerRepository: 1 } });
    try {
      await label(app, 11);
      await live(app, 11);
      await label(app, 12);
      await app.parts.previews.idle();
      assert.match(
        comment(app, 12),
        /\*\*Queued\*\* \(position 1\): this repository has 1 live preview\(s\), its limit is 1\. It starts when a preview ends\./,
      );
      assert.equal(await app.exists(previewNs(12)), false, "no namespace while it waits");
      assert.deepEqual(statuses(app, 12), [], "no deployment while it waits");

      await close(app, 11);
      await gone(app, 11);
      assert.match(comment(app, 11), /\*\*Torn down\*\* \(the pull request closed\)/);
      await live(app, 12);
      assert.equal(
        app.sent("POST", /\/issues\/12\/comments$/).length,
        1,
        "the queued comment became the live one",
      );
      assert.equal(await app.exists(previewNs(12), "c11"), false, "the second runs its own head");

      await close(app, 12);
      await gone(app, 12);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(app);
    } finally {
      await app.close();
    }
  });

  it("removing the label, or /preview stop by a writer, tears the preview down and its comment says why", async () => {
    const app = await open();
    try {
      await label(app, 13);
      await live(app, 13);
      const pr = pulls.get(13) as Pull;
      await app.probot.receive(
        pullRequestEvent("unlabeled", {
          number: 13,
          headSha: pr.head,
          headRef: pr.branch,
          label: "preview",
          labels: [],
        }),
      );
      await gone(app, 13);
      assert.match(comment(app, 13), /\*\*Torn down\*\* \(the preview label was removed\)/);

      await label(app, 14);
      await live(app, 14);
      await app.probot.receive(
        issueCommentEvent({ body: "/preview stop", number: 14, commentId: 1401, sender: { login: "alice" } }),
      );
      await gone(app, 14);
      assert.match(comment(app, 14), /\*\*Torn down\*\* \(@alice asked with \/preview stop\)/);
      clean(app);
    } finally {
      await app.close();
    }
  });

  it("a teardown the app was stopped in the middle of is finished by the next instance, on the preview's cluster", async () => {
    const stateNamespace = await cluster.namespace("pl-state");
    // The previews run on a destination cluster of their own: only its client may delete their
    // namespaces (the app's own account has no namespace rights beyond reading them).
    const own = cluster.syncwardClientWith(stateRules).client;
    const previewsCluster = cluster.syncwardClientWith([...previewRules, ...stateRules]).client;
    const clusters = {
      clientFor: (d: { cluster?: string }) => (d.cluster === "previews" ? previewsCluster : own),
    };
    const onPreviewsCluster = { stateNamespace, client: own, clusters, destinationCluster: "previews" };
    const first = await open(onPreviewsCluster);
    let second: PreviewApp | undefined;
    try {
      await label(first, 15);
      await live(first, 15);
      // Something of the operator's holds the namespace: the teardown waits for it.
      hold(previewNs(15), true);
      await close(first, 15);
      await until("the first instance to be waiting for the namespace", async () => {
        assert.match(comment(first, 15), /\*\*Tearing down\*\*: waiting for/);
      });
      await first.close();
      assert.equal(await first.exists(previewNs(15)), true, "the namespace is still there");
      assert.equal(statuses(first, 15).at(-1), "success", "the first instance never marked it inactive");

      second = await open(onPreviewsCluster);
      hold(previewNs(15), false);
      await gone(second, 15, first);
      // The reason is the close's, not the restart's.
      assert.match(comment(second, 15), /\*\*Torn down\*\* \(the pull request closed\)/);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(second);
    } finally {
      await first.close();
      await second?.close();
      // Whatever happened above, the namespace is not held after the test.
      try {
        hold(previewNs(15), false);
      } catch {
        // already gone
      }
    }
  });

  it("a preview whose pull request has not moved for its time to live is torn down", async () => {
    const stateNamespace = await cluster.namespace("pl-state");
    const app = await open({ stateNamespace, template: { ttl: "1m" } });
    try {
      await label(app, 16);
      await live(app, 16);
      // More than the minute passes without a push: the record says the pull request last moved
      // two minutes ago (the sweep reads the time from there).
      const store = new PreviewStore(cluster.client, stateNamespace);
      const key = previewKey("acme/shop", 16, "dev");
      await until(
        "the sweep to tear it down",
        async () => {
          const stored = await store.get(key);
          if (
            stored &&
            stored.record.phase === "live" &&
            Date.parse(stored.record.lastMovedAt) > Date.now() - 60_000
          )
            await store
              .put(
                { ...stored.record, lastMovedAt: new Date(Date.now() - 120_000).toISOString() },
                stored.resourceVersion,
              )
              .catch(() => undefined); // a report wrote it meanwhile: the next round
          await app.parts.previews.idle();
          assert.equal(await app.exists(previewNs(16)), false);
        },
        60_000,
      );
      await gone(app, 16);
      assert.match(
        comment(app, 16),
        /\*\*Torn down\*\* \(its time to live passed since the pull request last moved\)/,
      );
      clean(app);
    } finally {
      await app.close();
    }
  });

  it("a repository removed from the installation has its previews torn down, with nothing asked of GitHub", async () => {
    const stateNamespace = await cluster.namespace("pl-gone-state");
    const app = await open({ stateNamespace });
    try {
      await label(app, 17);
      await live(app, 17);
      const asked = app.mock.requests.length;
      await app.probot.receive(installationRepositoriesEvent("removed", ["acme/shop"]));
      await until(
        "the namespace and the record to go",
        async () => {
          await app.parts.previews.idle();
          assert.equal(await app.exists(previewNs(17)), false, "the namespace it created is deleted");
          assert.equal(await records(stateNamespace), 0, "no record is left to sweep");
        },
        60_000,
      );
      const after = app.mock.requests.slice(asked);
      assert.deepEqual(
        after.filter((r) => /\/issues\/comments\/|\/deployments\//.test(r.url)),
        [],
        "no comment edit or deployment status for a repository GitHub would not let syncward reach",
      );
      clean(app);
    } finally {
      await app.close();
    }
  });
  it("a merged pull request's preview is torn down whole: namespace, deployment inactive, and its state and Lease in syncward's namespace", async () => {
    const stateNamespace = await cluster.namespace("pl-merge-state");
    // As one of several replicas: the preview's Reconciler takes a Lease, as in production.
    const app = await open({ stateNamespace, identity: "merge-replica" });
    const leftovers = async () => {
      const app = `${githubAppId(repoIdOf("acme/shop"))}-pr-19-dev`;
      const state = await cluster.client.get(
        "v1",
        "ConfigMap",
        stateNamespace,
        stateConfigMapName(instanceName(app, "pr-19-dev")),
      );
      const lease = await cluster.client.get(
        "coordination.k8s.io/v1",
        "Lease",
        stateNamespace,
        appLeaseName(app),
      );
      return { state: state !== undefined, lease: lease !== undefined };
    };
    try {
      await label(app, 19);
      await live(app, 19);
      assert.deepEqual(
        await leftovers(),
        { state: true, lease: true },
        "the preview kept its state and Lease",
      );
      const pr = pulls.get(19) as Pull;
      await app.probot.receive(
        pullRequestEvent("closed", {
          number: 19,
          headSha: pr.head,
          headRef: pr.branch,
          merged: true,
          // GitHub merges the head into main; the merge deploys a real commit of the test repository.
          mergeCommitSha: pr.head,
          labels: ["preview"],
        }),
      );
      pulls.set(19, { ...pr, state: "closed" });
      await gone(app, 19);
      assert.match(comment(app, 19), /\*\*Torn down\*\* \(the pull request was merged\)/);
      await until("its state and Lease to go", async () => {
        await app.parts.previews.idle();
        assert.deepEqual(await leftovers(), { state: false, lease: false });
      });
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(app);
    } finally {
      await app.close();
    }
  });

  it("a teardown whose cluster does not answer is retried, said on the comment, and finishes when it answers", async () => {
    const stateNamespace = await cluster.namespace("pl-outage-state");
    const own = cluster.syncwardClientWith(stateRules).client;
    // The previews' cluster is reached through a proxy the test can cut.
    const granted = cluster.syncwardClientWith([...previewRules, ...stateRules]);
    const server = (
      parse(readFileSync(granted.kubeconfig, "utf8")) as { clusters: Array<{ cluster: { server: string } }> }
    ).clusters[0]?.cluster.server as string;
    const proxy = await cuttableProxy(
      granted.kubeconfig,
      server,
      mkdtempSync(join(tmpdir(), "syncward-pl-")),
    );
    const previewsCluster = KubeClient.fromKubeconfig({ kubeconfig: proxy.kubeconfig, timeoutMs: 3_000 });
    const clusters = {
      clientFor: (d: { cluster?: string }) => (d.cluster === "previews" ? previewsCluster : own),
    };
    const app = await open({ stateNamespace, client: own, clusters, destinationCluster: "previews" });
    const store = new PreviewStore(cluster.client, stateNamespace);
    try {
      await label(app, 18);
      await live(app, 18);
      await proxy.cut();
      await close(app, 18);
      await until(
        "the comment to say the teardown waits for the cluster, and the record to count its tries",
        async () => {
          assert.match(comment(app, 18), /\*\*Tearing down\*\*: waiting for the API server/);
          const stored = await store.get(previewKey("acme/shop", 18, "dev"));
          assert.equal(stored?.record.phase, "tearingDown");
          assert.ok((stored?.record.attempts ?? 0) >= 2, `${stored?.record.attempts} tries recorded`);
          assert.match(String(stored?.record.lastError), /the API server/);
        },
      );
      assert.equal(await app.exists(previewNs(18)), true, "the namespace waits for its cluster");
      assert.notEqual(statuses(app, 18).at(-1), "inactive", "not inactive while it is still there");
      await proxy.restore();
      await gone(app, 18);
      assert.match(comment(app, 18), /\*\*Torn down\*\* \(the pull request closed\)/);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(app);
    } finally {
      await app.close();
      await proxy.close();
      previewsCluster.close();
    }
  });

  it("a GitHub failure just after the namespace is made leaves a preview that runs, and a close leaves nothing", async () => {
    const stateNamespace = await cluster.namespace("pl-gh-state");
    let failed = false;
    const app = await open({
      stateNamespace,
      // GitHub fails the start's deployment once: the namespace exists by then.
      before: (a) =>
        a.mock.api
          .post(`${REPO_PATH}/deployments`, (body: { environment?: string }) => {
            if (failed || body.environment !== "pr-20-dev") return false;
            failed = true;
            return true;
          })
          .reply(500, { message: "Server Error" }),
    });
    try {
      await label(app, 20);
      await live(app, 20);
      assert.ok(failed, "GitHub failed the first deployment");
      const stored = await new PreviewStore(cluster.client, stateNamespace).get(
        previewKey("acme/shop", 20, "dev"),
      );
      const ns = await cluster.client.get("v1", "Namespace", undefined, previewNs(20));
      assert.equal(stored?.record.namespaceUid, ns?.metadata.uid, "the record names the namespace it made");
      await close(app, 20);
      await gone(app, 20);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
    } finally {
      await app.close();
    }
  });
  it("two replicas starting one queued preview at once: one starts it, and its record keeps the namespace, which the close deletes", async () => {
    const stateNamespace = await cluster.namespace("pl-race-state");
    // Two replicas of the app on the same records, sweeps off: the test starts the queue itself.
    const a = await open({ stateNamespace, sweepMs: 0 });
    const b = await open({ stateNamespace, sweepMs: 0 });
    try {
      // A queued preview whose limits now allow it (as a teardown elsewhere leaves it).
      repo.git("checkout", "-q", "-b", "feature-21", "main");
      const head = repo.commit({ "app/c21.yaml": configMap("c21") }, "add c21");
      repo.git("checkout", "-q", "main");
      pulls.set(21, { state: "open", head, branch: "feature-21" });
      const store = new PreviewStore(cluster.client, stateNamespace);
      const key = previewKey("acme/shop", 21, "dev");
      const now = new Date().toISOString();
      await store.put({
        key,
        repository: { owner: "acme", repo: "shop", id: repoIdOf("acme/shop") },
        installation: DEFAULT_INSTALLATION_ID,
        pull: 21,
        from: "dev",
        namespace: previewNs(21),
        destination: {},
        head: { branch: "feature-21", sha: head },
        phase: "queued",
        requestedAt: now,
        lastMovedAt: now,
        attempts: 0,
      });
      // Two teardowns finishing together, on two replicas: each starts the queue.
      await Promise.all([a.parts.previews.startQueued(), b.parts.previews.startQueued()]);
      await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
      const stored = await store.get(key);
      const ns = await cluster.client.get("v1", "Namespace", undefined, previewNs(21));
      assert.equal(stored?.record.phase, "live", "the preview is recorded live");
      assert.ok(ns?.metadata.uid, "its namespace is there");
      assert.equal(stored?.record.namespaceUid, ns?.metadata.uid, "the record names the namespace");
      assert.deepEqual(
        a.sent("POST", /\/issues\/21\/comments$/).filter((c) => /No live preview/.test(String(c.body))),
        [],
        "no refusal from the start that lost",
      );
      await close(a, 21);
      await until(
        "the namespace and the record to go",
        async () => {
          await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
          assert.equal(await a.exists(previewNs(21)), false);
          assert.equal(await records(stateNamespace), 0);
        },
        60_000,
      );
    } finally {
      // The first app's mock answers for both: it is forgotten last.
      await b.close();
      await a.close();
    }
  });

  it("a namespace a start made before it could record it (a crash) is taken up by the next start, and the close deletes it", async () => {
    const stateNamespace = await cluster.namespace("pl-claim-state");
    const app = await open({ stateNamespace, limits: { maxPerRepository: 1 } });
    const store = new PreviewStore(cluster.client, stateNamespace);
    try {
      await label(app, 22);
      await live(app, 22);
      await label(app, 23);
      await app.parts.previews.idle();
      assert.match(comment(app, 23), /\*\*Queued\*\*/);
      // A start of #23 created its namespace and stopped there (a crash): the namespace carries
      // the token the start wrote into the record first; no uid is recorded.
      const key = previewKey("acme/shop", 23, "dev");
      const queued = await store.get(key);
      assert.ok(queued);
      await store.put({ ...queued.record, claim: "token-of-23", launches: 1 }, queued.resourceVersion);
      const made = await cluster.client.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: previewNs(23),
          labels: { [PREVIEW_LABEL]: "true" },
          annotations: { [PREVIEW_CLAIM_ANNOTATION]: "token-of-23" },
        },
      });
      await close(app, 22);
      await gone(app, 22);
      await live(app, 23);
      const stored = await store.get(key);
      assert.equal(
        stored?.record.namespaceUid,
        made.metadata.uid,
        "the namespace made before is the preview's",
      );
      await close(app, 23);
      await gone(app, 23);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(app);
    } finally {
      await app.close();
    }
  });
  it("an object of the pull request's own whose finalizer nobody removes holds the teardown: the comment names what holds the namespace, it counts against the limits, and it ends once the operator removes the finalizer", async () => {
    const stateNamespace = await cluster.namespace("pl-final-state");
    const app = await open({ stateNamespace, limits: { maxPerRepository: 1 } });
    const ns = previewNs(24);
    const release = () =>
      kubectl([
        "patch",
        "configmap",
        "stuck",
        "-n",
        ns,
        "--type=merge",
        "-p",
        JSON.stringify({ metadata: { finalizers: null } }),
      ]);
    try {
      // #24's manifests hold a ConfigMap with a finalizer no controller ever removes.
      await labelPull(app, repo, pulls, 24, {
        "app/stuck.yaml":
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stuck, finalizers: ["example.com/never"]}\ndata: {v: "1"}\n',
      });
      await live(app, 24);
      await close(app, 24);
      // Not idle(): the teardown waits as long as the finalizer is there.
      await until("the comment to name what holds the namespace", async () => {
        assert.match(comment(app, 24), /\*\*Tearing down\*\*: waiting for .*example\.com\/never.*configmaps/);
      });
      // Still counted against the limits: another pull request waits.
      await label(app, 25);
      assert.match(comment(app, 25), /\*\*Queued\*\* \(position 1\): this repository has 1 live preview/);
      assert.equal(await app.exists(previewNs(25)), false);
      assert.ok(await app.exists(ns), "the namespace is not forced: its finalizer is not stripped");

      // The operator looks (kubectl get all -n <ns>), decides, and removes the finalizer.
      release();
      await gone(app, 24);
      await live(app, 25);
      await close(app, 25);
      await gone(app, 25);
      assert.equal(await records(stateNamespace), 0, "no preview is left recorded");
      clean(app);
    } finally {
      try {
        release();
      } catch {
        // already gone
      }
      await app.close();
    }
  });
});
