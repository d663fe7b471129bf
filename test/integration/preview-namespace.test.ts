// A preview's namespace on a real API server: created with the operator's quota and limits (and
// deleted again when they cannot be applied), refused when a namespace of that name exists that
// syncward did not create for the preview (unless it carries the record's claim), and at teardown
// deleted by its recorded uid only (never a namespace that merely has its name).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import {
  PREVIEW_CLAIM_ANNOTATION,
  PREVIEW_GUARD_NAME,
  PREVIEW_OF_ANNOTATION,
  preparePreviewNamespace,
  teardownPreviewNamespace,
} from "../../src/reconciler/preview-namespace.ts";
import { eventually, kubectl, useCluster } from "../support/cluster.ts";
import { optionalRules } from "../support/syncward-account.ts";

const cluster = useCluster();
const LIMITS = {
  resourceQuota: { hard: { pods: "5", "limits.memory": "1Gi" } },
  limitRange: { limits: [{ type: "Container", default: { memory: "128Mi" } }] },
};
// What syncward needs for previews beyond deploy/'s defaults: the opt-in component's grants.
const previewRules = optionalRules("previews.yaml", "previews");
const made: string[] = [];
const fresh = () => {
  const name = `pv-${randomBytes(3).toString("hex")}-pr-7`;
  made.push(name);
  return name;
};
after(() => {
  for (const ns of made) kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]);
});

describe("a preview namespace", () => {
  let account: ReturnType<typeof cluster.syncwardClientWith>["client"] | undefined;
  const client = () => {
    account ??= cluster.syncwardClientWith(previewRules).client;
    return account;
  };

  it("is created with the operator's ResourceQuota and LimitRange, and found again by its uid", async () => {
    const ns = fresh();
    const first = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS);
    assert.ok(first.ok && first.created, JSON.stringify(first));
    const quota = JSON.parse(kubectl(["get", "resourcequota", PREVIEW_GUARD_NAME, "-n", ns, "-o", "json"]));
    assert.deepEqual(quota.spec.hard, { pods: "5", "limits.memory": "1Gi" });
    const range = JSON.parse(kubectl(["get", "limitrange", PREVIEW_GUARD_NAME, "-n", ns, "-o", "json"]));
    assert.equal(range.spec.limits[0].default.memory, "128Mi");
    // A tenant deletes the quota: the next preparation (every resync) puts it back.
    kubectl(["delete", "resourcequota", PREVIEW_GUARD_NAME, "-n", ns]);
    const again = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS, {
      recordedUid: first.uid,
    });
    assert.deepEqual(again, { ok: true, uid: first.uid, created: false });
    assert.match(kubectl(["get", "resourcequota", "-n", ns, "-o", "name"]), /syncward-preview/);
  });

  it("refuses a namespace of that name that someone else made, whatever its labels claim", async () => {
    const ns = fresh();
    kubectl(["create", "namespace", ns]);
    kubectl(["annotate", "namespace", ns, `${PREVIEW_OF_ANNOTATION}=acme/payments#7:dev`]);
    kubectl(["label", "namespace", ns, "syncward.dev/preview=true"]);
    const ready = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS);
    assert.equal(ready.ok, false);
    assert.match(ready.ok ? "" : ready.reason, /already exists and syncward did not create it/);
    assert.equal(kubectl(["get", "resourcequota", "-n", ns, "-o", "name"]).trim(), "");
  });

  it("is taken as the preview's when it carries the record's claim (a start cut short before the uid was recorded); another token is refused", async () => {
    const ns = fresh();
    // What a start that stopped right after the create left: the namespace with the record's token.
    kubectl(["create", "namespace", ns]);
    kubectl(["annotate", "namespace", ns, `${PREVIEW_CLAIM_ANNOTATION}=the-records-token`]);
    const other = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS, {
      claim: "another-records-token",
    });
    assert.equal(other.ok, false);
    assert.equal(kubectl(["get", "resourcequota", "-n", ns, "-o", "name"]).trim(), "", "nothing written");
    const ready = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS, {
      claim: "the-records-token",
    });
    const uid = JSON.parse(kubectl(["get", "namespace", ns, "-o", "json"])).metadata.uid;
    assert.deepEqual(ready, { ok: true, uid, created: false });
    assert.match(kubectl(["get", "resourcequota", "-n", ns, "-o", "name"]), /syncward-preview/);
  });

  it("puts the record's claim on the namespace it creates", async () => {
    const ns = fresh();
    const ready = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS, {
      claim: "tok",
    });
    assert.ok(ready.ok && ready.created);
    const live = JSON.parse(kubectl(["get", "namespace", ns, "-o", "json"]));
    assert.equal(live.metadata.annotations[PREVIEW_CLAIM_ANNOTATION], "tok");
  });

  it("is deleted again when the quota cannot be applied, so no namespace is left without it or without an owner", async () => {
    const ns = fresh();
    // The API server refuses the quota (here: a quantity it cannot read; an admission webhook or
    // a 5xx would do the same).
    const refused = { resourceQuota: { hard: { pods: "a few" } } };
    await assert.rejects(
      preparePreviewNamespace(client(), ns, "acme/payments#7:dev", refused, { claim: "tok" }),
      /pods|quantit/i,
    );
    const live = await cluster.client.get("v1", "Namespace", undefined, ns);
    assert.ok(live === undefined || live.metadata.deletionTimestamp, "the namespace made just now is going");
    // The next start, once the quota is one the API server takes, makes it again.
    await eventually(
      "a new start to make the namespace again",
      async () => {
        const again = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS, {
          claim: "tok",
        });
        return again.ok;
      },
      60_000,
    );
  });

  it("is deleted at teardown, and a namespace that took its name afterwards is left alone", async () => {
    const ns = fresh();
    const ready = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", LIMITS);
    assert.ok(ready.ok);
    kubectl(["create", "configmap", "left", "-n", ns, "--from-literal=a=b"]);
    await eventually(
      "the namespace gone",
      async () => (await teardownPreviewNamespace(client(), ns, ready.uid)).done,
      60_000,
    );
    assert.equal(await cluster.client.get("v1", "Namespace", undefined, ns), undefined);

    // Someone creates a namespace of the same name: a teardown of the old preview never touches it.
    kubectl(["create", "namespace", ns]);
    assert.deepEqual(await teardownPreviewNamespace(client(), ns, ready.uid), { done: true });
    const theirs = await cluster.client.get("v1", "Namespace", undefined, ns);
    assert.ok(theirs && !theirs.metadata.deletionTimestamp, "the new namespace of that name was deleted");
  });

  it("reports what holds a terminating namespace: the finalizers and the kinds of objects that remain", async () => {
    const ns = fresh();
    const ready = await preparePreviewNamespace(client(), ns, "acme/payments#7:dev", {});
    assert.ok(ready.ok);
    kubectl(["create", "configmap", "held", "-n", ns, "--from-literal=a=b"]);
    const finalizers = (list: string[] | null) =>
      kubectl([
        "patch",
        "configmap",
        "held",
        "-n",
        ns,
        "--type=merge",
        "-p",
        JSON.stringify({ metadata: { finalizers: list } }),
      ]);
    finalizers(["example.com/hold"]);
    const waiting = await eventually(
      "the finalizer reported",
      async () => {
        const t = await teardownPreviewNamespace(client(), ns, ready.uid);
        return !t.done && /example.com\/hold/.test(t.waiting) && /configmaps/.test(t.waiting)
          ? t.waiting
          : undefined;
      },
      60_000,
    );
    // The finalizer and the kind of object it holds: what to look for with kubectl get -n.
    assert.match(waiting, /finalizers remaining: example.com\/hold.*; .*configmaps/);
    finalizers(null);
    await eventually(
      "the namespace gone once the finalizer is removed",
      async () => (await teardownPreviewNamespace(client(), ns, ready.uid)).done,
      60_000,
    );
  });
});
