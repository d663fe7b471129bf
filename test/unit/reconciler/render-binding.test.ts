import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../src/kube/object.ts";
import {
  approvedRenderMoved,
  deployedRenderMoved,
  describeRenderChange,
  NAMED_OBJECTS_KEPT,
  renderChangedReason,
  renderSeen,
} from "../../../src/reconciler/render-binding.ts";
import { defaultState } from "../../../src/state/store.ts";

const SHA = "c".repeat(40);
const cm = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "prod" },
  data,
});
const secret = (value: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "prod" },
  stringData: { password: value },
});

describe("what an approval binds: the render", () => {
  it("names what changed, added and went; only the names, in key order of the render", () => {
    const before = renderSeen([cm("settings", { a: "1" }), cm("old", {})], "prod");
    const after = renderSeen([cm("settings", { a: "2" }), cm("new", {})], "prod");
    assert.notEqual(before.digest, after.digest);
    assert.equal(
      describeRenderChange(before, after),
      "/ConfigMap:prod/settings changed, /ConfigMap:prod/new added, /ConfigMap:prod/old removed",
    );
    assert.equal(
      renderChangedReason(SHA, before, after),
      "the render of ccccccc changed since it was approved: /ConfigMap:prod/settings changed, /ConfigMap:prod/new added, /ConfigMap:prod/old removed",
    );
  });

  it("names an object that names no namespace as it is applied, in the destination; the digest is of the render", () => {
    const bare = (name: string, v: string): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data: { v },
    });
    const role: KubeObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "reader" },
    };
    const before = renderSeen([bare("remote", "approved"), role], "prod");
    const after = renderSeen([bare("remote", "changed"), role], "prod");
    assert.deepEqual(Object.keys(after.objects ?? {}), [
      "/ConfigMap:prod/remote",
      "rbac.authorization.k8s.io/ClusterRole:/reader",
    ]);
    assert.equal(describeRenderChange(before, after), "/ConfigMap:prod/remote changed");
    // The digest does not depend on where the render goes: the same one as before this naming.
    assert.equal(renderSeen([bare("remote", "approved"), role], "elsewhere").digest, before.digest);
  });

  it("keeps no hash of a Secret, and says a Secret changed without a value", () => {
    const before = renderSeen([cm("settings", {}), secret("hunter2-old")], "prod");
    const after = renderSeen([cm("settings", {}), secret("hunter2-new")], "prod");
    assert.notEqual(before.digest, after.digest);
    assert.deepEqual(Object.keys(after.objects ?? {}), ["/ConfigMap:prod/settings"]);
    const said = describeRenderChange(before, after);
    assert.equal(said, "a Secret's content changed (its values are not shown)");
    assert.doesNotMatch(said, /hunter2/);
  });

  it("a large render keeps only its digest and count", () => {
    const many = Array.from({ length: NAMED_OBJECTS_KEPT + 1 }, (_, i) => cm(`c${i}`, {}));
    const seen = renderSeen(many, "prod");
    assert.equal(seen.objects, undefined);
    assert.match(
      describeRenderChange({ digest: "0123456789abcdef" }, seen),
      /^its 201 object\(s\) now render to digest 0123456789ab -> [0-9a-f]{12}$/,
    );
  });

  it("the deployed revision moved only when its render differs from the one applied", () => {
    const applied = renderSeen([cm("settings", { a: "1" })], "prod");
    const now = renderSeen([cm("settings", { a: "2" })], "prod");
    const s = { ...defaultState("app.prod"), lastSyncedRevision: SHA, renderedDigest: applied.digest };
    assert.equal(deployedRenderMoved(s, SHA, applied), undefined);
    assert.deepEqual(deployedRenderMoved(s, SHA, now), { digest: applied.digest });
    assert.equal(deployedRenderMoved(s, "d".repeat(40), now), undefined, "another revision");
    assert.equal(deployedRenderMoved({ ...s, renderedDigest: undefined }, SHA, now), undefined);
  });

  it("approvals of another render of the revision: the wait's objects say what changed", () => {
    const shown = renderSeen([cm("settings", { a: "1" })], "prod");
    const now = renderSeen([cm("settings", { a: "2" })], "prod");
    const s = defaultState("app.prod");
    s.pendingApprovals = [{ sha: SHA, by: "carol", at: "", render: shown.digest }];
    s.pendingSync = {
      revision: SHA,
      trigger: "push",
      actor: "x",
      requestedAt: "",
      manual: false,
      render: shown.digest,
      ...(shown.objects ? { renderedObjects: shown.objects } : {}),
    };
    assert.equal(approvedRenderMoved(s, SHA, shown), undefined);
    const moved = approvedRenderMoved(s, SHA, now);
    assert.equal(moved?.digest, shown.digest);
    assert.equal(describeRenderChange(moved, now), "/ConfigMap:prod/settings changed");
  });
});
