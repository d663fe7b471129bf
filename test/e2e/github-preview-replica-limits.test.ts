// The operator's limits on live previews with the app as two replicas on the real control plane
// (GitHub mocked, every request checked against GitHub's OpenAPI description): two pull requests
// labelled at the same moment, each on another replica, with one place left under the
// per-repository limit, then under the per-installation one. Exactly one preview goes live; the
// other is queued and its comment says why; when the live one's pull request closes, the queued
// one starts.
//
// "The same moment" is made the worst one, every run: replica B stamps its request first, then
// writes its record only after replica A has written its own and read the records (so A saw no
// one), and A's preview goes live only after B has read the records too (so B saw A's still
// waiting, behind it by the clocks). Deciding from those reads alone, both would start. The
// replicas' clients hold those calls back; nothing else in the app is changed.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import type { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import {
  PREVIEW_RECORD_LABEL,
  type PreviewRecord,
  parsePreviewRecord,
  previewKey,
} from "../../src/state/preview-store.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { takeOpenApiViolations } from "../support/github.ts";
import {
  closePull,
  labelPull,
  type PreviewApp,
  type Pull,
  previewRules,
  startPreviewApp,
  stateRules,
  until,
} from "../support/preview-app.ts";
import { configMap } from "../support/projects.ts";

const cluster = useCluster();
const prefix = `pq${randomBytes(3).toString("hex")}`;
const previewNs = (n: number) => `${prefix}-pr-${n}`;
const keyOf = (n: number) => previewKey("acme/shop", n, "dev");

/** A signal a test waits for; a wait gives up after 20 s so a changed code path fails, not hangs. */
function signal() {
  let fire!: () => void;
  const fired = new Promise<void>((r) => {
    fire = r;
  });
  return {
    fire,
    fired,
    wait: () => Promise.race([fired, new Promise<void>((r) => setTimeout(r, 20_000).unref())]),
  };
}

/** The preview record a ConfigMap the app writes holds, if it is one. */
const recordIn = (o: KubeObject): PreviewRecord | undefined =>
  o.kind === "ConfigMap" && o.metadata.labels?.[PREVIEW_RECORD_LABEL] === "true"
    ? parsePreviewRecord(String((o.data as Record<string, string>)["preview.json"]))
    : undefined;

/**
 * The replica's client, with hooks around its writes and lists of preview records: `create` and
 * `replace` wait for `before` first, `afterList` runs once a list of them has answered.
 */
function hooked(
  client: KubeClient,
  hooks: {
    before?: (kind: "create" | "replace", record: PreviewRecord) => Promise<void>;
    afterCreate?: (record: PreviewRecord) => void;
    afterList?: () => void;
  },
): KubeClient {
  const { create, replace, list } = client;
  client.create = async (o) => {
    const record = recordIn(o);
    if (record) await hooks.before?.("create", record);
    const made = await create.call(client, o);
    if (record) hooks.afterCreate?.(record);
    return made;
  };
  client.replace = async (o) => {
    const record = recordIn(o);
    if (record) await hooks.before?.("replace", record);
    return replace.call(client, o);
  };
  client.list = async (apiVersion, kind, options) => {
    const listed = await list.call(client, apiVersion, kind, options);
    if (kind === "ConfigMap" && options?.labelSelector?.includes(PREVIEW_RECORD_LABEL)) hooks.afterList?.();
    return listed;
  };
  return client;
}

describe("the operator's limits with two replicas starting previews at the same moment", () => {
  const repo = makeRepo({ "app/a.yaml": configMap("a") });
  const pulls = new Map<number, Pull>();

  const cases = [
    {
      limit: "per-repository",
      limits: { maxPerRepository: 1, maxPerInstallation: 20 },
      reason: "this repository has 1 live preview(s), its limit is 1",
      first: 31,
      second: 32,
    },
    {
      limit: "per-installation",
      limits: { maxPerRepository: 5, maxPerInstallation: 1 },
      reason: "this installation has 1 live preview(s), its limit is 1",
      first: 33,
      second: 34,
    },
  ];

  for (const { limit, limits, reason, first, second } of cases)
    it(`${limit} limit of 1: one goes live, the other is queued and says so, and starts when the first ends`, async () => {
      const stateNamespace = await cluster.namespace("pq-state");
      const bCreating = signal();
      const aListed = signal();
      const bListed = signal();
      let aCreated = false;
      let bCreated = false;
      const account = () => cluster.syncwardClientWith([...previewRules, ...stateRules]).client;
      // Replica A: `first`, asked for after B's; it goes live only once B has read the records.
      const clientA = hooked(account(), {
        afterCreate: (r) => {
          if (r.key === keyOf(first)) aCreated = true;
        },
        afterList: () => {
          if (aCreated) aListed.fire();
        },
        before: async (kind, r) => {
          if (kind === "replace" && r.key === keyOf(first) && r.phase === "live") await bListed.wait();
        },
      });
      // Replica B: `second`, asked for first; its record is written once A has read the records.
      const clientB = hooked(account(), {
        before: async (kind, r) => {
          if (kind === "create" && r.key === keyOf(second)) {
            bCreating.fire();
            await aListed.wait();
          }
        },
        afterCreate: (r) => {
          if (r.key === keyOf(second)) bCreated = true;
        },
        afterList: () => {
          if (bCreated) bListed.fire();
        },
      });
      const options = { cluster, repo, pulls, prefix, stateNamespace, limits, sweepMs: 0 };
      const a = await startPreviewApp({ ...options, client: clientA, identity: "replica-a" });
      const b = await startPreviewApp({ ...options, client: clientB, identity: "replica-b" });
      const apps: Array<[PreviewApp, number]> = [
        [a, first],
        [b, second],
      ];
      try {
        const labelledB = labelPull(b, repo, pulls, second);
        await bCreating.wait();
        const labelledA = labelPull(a, repo, pulls, first);
        await Promise.all([labelledA, labelledB]);

        /** The pull requests whose preview namespace exists now. */
        const withNamespace = async () => {
          const out: number[] = [];
          for (const n of [first, second]) if (await a.exists(previewNs(n))) out.push(n);
          return out;
        };
        // The first app's mock answers for both replicas: its records are GitHub's.
        const comment = (n: number) => String(a.comments(n).at(-1)?.body);
        let liveOne = 0;
        await until(
          "one preview live, the other queued",
          async () => {
            await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
            const made = await withNamespace();
            assert.equal(made.length, 1, `exactly one preview namespace, not ${JSON.stringify(made)}`);
            liveOne = made[0] as number;
            assert.ok(await a.exists(previewNs(liveOne), `c${liveOne}`), "its objects are deployed");
            assert.match(comment(liveOne), /\*\*Live\*\*/);
          },
          60_000,
        );
        const waiting = liveOne === first ? second : first;
        assert.ok(
          comment(waiting).includes(`**Queued** (position 1): ${reason}. It starts when a preview ends.`),
          comment(waiting),
        );
        // Still one a moment later: no start of the waiting one is under way.
        await new Promise((r) => setTimeout(r, 1000));
        await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
        assert.deepEqual(await withNamespace(), [liveOne], "still only one");

        // The live one's pull request closes, on the replica that started it: the other starts.
        const [starter] = apps.find(([, n]) => n === liveOne) as [PreviewApp, number];
        await closePull(starter, pulls, liveOne);
        await until(
          "the first torn down and the queued one live",
          async () => {
            await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
            assert.deepEqual(await withNamespace(), [waiting]);
            assert.ok(await a.exists(previewNs(waiting), `c${waiting}`), "its objects are deployed");
            assert.match(comment(waiting), /\*\*Live\*\*/);
          },
          60_000,
        );
        assert.equal(
          a.sent("POST", new RegExp(`/issues/${waiting}/comments$`)).length,
          1,
          "the queued comment became the live one",
        );
        await closePull(starter, pulls, waiting);
        await until(
          "both torn down",
          async () => {
            await Promise.all([a.parts.previews.idle(), b.parts.previews.idle()]);
            assert.deepEqual(await withNamespace(), []);
          },
          60_000,
        );
        assert.deepEqual(takeOpenApiViolations(), [], "every request is one GitHub takes");
        assert.deepEqual(
          a.mock.requests.filter((r) => r.url.endsWith("(no match)")),
          [],
        );
      } finally {
        // The first app's mock answers for both: it is forgotten last.
        await b.close();
        await a.close();
      }
    });
});
