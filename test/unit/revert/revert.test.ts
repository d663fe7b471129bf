// The pure parts of reverting: the removal patch, security flags, and the trail history keeps.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeEvent } from "../../../src/cli/commands/controller.ts";
import { maskedValue, revertTrail, securityReason } from "../../../src/engine/revert/index.ts";
import { removalPatch } from "../../../src/engine/revert/removal-patch.ts";
import type { RevertedChange } from "../../../src/engine/revert/trail.ts";
import type { SyncOutcome } from "../../../src/engine/sync.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import type { ReconcilerEvent } from "../../../src/reconciler/events.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";
import { fixture } from "../diff/fixtures.ts";

const attacked = fixture("deployment.live-attacked.yaml");
const git = fixture("deployment.desired-web.yaml");

describe("removalPatch", () => {
  it("tests the resourceVersion, removes later list positions first, and takes serviceAccount along", () => {
    assert.deepEqual(
      removalPatch(attacked, [
        "/spec/template/spec/containers/0",
        "/spec/template/spec/containers/1/env",
        "/spec/template/spec/containers/1/securityContext",
        "/spec/template/spec/serviceAccountName",
        "/spec/template/spec/volumes",
      ]),
      [
        { op: "test", path: "/metadata/resourceVersion", value: attacked.metadata.resourceVersion },
        { op: "remove", path: "/spec/template/spec/volumes" },
        { op: "remove", path: "/spec/template/spec/serviceAccountName" },
        { op: "remove", path: "/spec/template/spec/serviceAccount" },
        { op: "remove", path: "/spec/template/spec/containers/1/securityContext" },
        { op: "remove", path: "/spec/template/spec/containers/1/env" },
        { op: "remove", path: "/spec/template/spec/containers/0" },
      ],
    );
  });

  it("drops locations inside another removal and locations live lacks; nothing to do is undefined", () => {
    const ops = removalPatch(attacked, [
      "/spec/template/spec/containers/0/env",
      "/spec/template/spec/containers/0",
      "/spec/nope",
    ]);
    assert.deepEqual(ops?.slice(1), [{ op: "remove", path: "/spec/template/spec/containers/0" }]);
    assert.equal(removalPatch(attacked, []), undefined);
    assert.equal(removalPatch(attacked, ["/spec/paused"]), undefined);
  });

  it("escapes keys with / and ~", () => {
    const live = { metadata: { resourceVersion: "7", annotations: { "a/b~c": "x" } } };
    assert.deepEqual(removalPatch(live, ["/metadata/annotations/a~1b~0c"])?.[1], {
      op: "remove",
      path: "/metadata/annotations/a~1b~0c",
    });
  });
});

describe("securityReason", () => {
  const cases: Array<[string, string, unknown, string | undefined]> = [
    [
      "/spec/template/spec/containers/0",
      "extra",
      { name: "miner", image: "evil:1" },
      "new container, image evil:1",
    ],
    [
      "/spec/template/spec/initContainers",
      "added",
      [{ name: "x", image: "y:1" }],
      "new container, image y:1",
    ],
    ["/spec/template/spec/containers/0/image", "changed", "evil:1", "image changed"],
    ["/spec/template/spec/containers/1/securityContext", "added", { privileged: true }, "privileged"],
    [
      "/spec/template/spec/containers/0/securityContext/capabilities",
      "added",
      { add: ["SYS_ADMIN"] },
      "added capabilities",
    ],
    ["/spec/template/spec/hostNetwork", "added", true, "host namespace"],
    ["/spec/template/spec/hostPID", "added", true, "host namespace"],
    ["/spec/template/spec/volumes", "added", [{ name: "h", hostPath: { path: "/" } }], "hostPath volume"],
    ["/spec/template/spec/serviceAccountName", "added", "admin", "ServiceAccount changed"],
    ["/spec/template/spec/automountServiceAccountToken", "added", true, "ServiceAccount changed"],
    ["/spec/replicas", "changed", 10, undefined],
    ["/spec/template/spec/containers/0/env", "added", [{ name: "FOO", value: "bar" }], undefined],
    ["/metadata/annotations/team", "added", "x", undefined],
  ];
  for (const [pointer, kind, value, expected] of cases) {
    it(`${kind} ${pointer} -> ${expected ?? "not flagged"}`, () =>
      assert.equal(securityReason(pointer, kind, value), expected));
  }
});

describe("revertTrail", () => {
  it("names each path, its manager, operation and time, flags what matters, and masks env values", () => {
    const trail = revertTrail("apps/Deployment:shop/web", git, attacked, {});
    assert.deepEqual(
      trail.map((r) => [r.path, r.manager, r.operation, r.trusted, r.security]),
      [
        ["/spec/replicas", "kubectl", "Update scale", false, undefined],
        ["/spec/template/spec/containers/0", "kubectl-patch", "Update", false, "new container, image evil:1"],
        ["/spec/template/spec/containers/1/env", "kubectl-set", "Update", false, undefined],
        ["/spec/template/spec/containers/1/securityContext", "kubectl-patch", "Update", false, "privileged"],
        [
          "/spec/template/spec/serviceAccountName",
          "kubectl-patch",
          "Update",
          false,
          "ServiceAccount changed",
        ],
        ["/spec/template/spec/volumes", "kubectl-patch", "Update", false, "hostPath volume"],
      ],
    );
    const env = trail.find((r) => r.path.endsWith("/env"));
    assert.equal(env?.value, '[{"name":"FOO","value":"********"}]');
    assert.equal(env?.at, "2026-12-01T09:20:36Z");
    const miner = trail.find((r) => r.path.endsWith("/containers/0"));
    assert.doesNotMatch(miner?.value ?? "", /bar/, "the added container's env value is masked too");
    assert.match(miner?.value ?? "", /evil:1/);
  });

  it("a trusted manager's change is marked trusted (healed with backoff, not at once)", () => {
    const trail = revertTrail("k", git, attacked, { trustedManagers: ["kubectl"] });
    assert.equal(trail.find((r) => r.path === "/spec/replicas")?.trusted, true);
  });

  it("masks a Secret's data and a single env value", () => {
    const secret: KubeObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } };
    assert.equal(maskedValue(secret, "/data/password", "c2VjcmV0"), "********");
    assert.equal(maskedValue(git, "/spec/template/spec/containers/0/env/0/value", "hunter2"), "********");
    assert.equal(maskedValue(git, "/spec/replicas", 10), "10");
  });
});

describe("the controller's line for a self-heal", () => {
  it("adds what matters for security, and nothing when nothing does", () => {
    const heal = (reverted: RevertedChange[]): ReconcilerEvent => ({
      type: "selfHealed",
      instance: "shop.dev",
      env: "dev",
      revision: "0123456789abcdef0123456789abcdef01234567",
      drifted: ["apps/Deployment:shop/web /spec/template/spec/containers/0/securityContext"],
      outcome: { phase: "Succeeded" } as SyncOutcome,
      entry: {} as HistoryEntry,
      reverted,
    });
    const privileged: RevertedChange = {
      object: "apps/Deployment:shop/web",
      path: "/spec/template/spec/containers/0/securityContext",
      kind: "added",
      manager: "kubectl-patch",
      trusted: false,
      security: "privileged",
    };
    assert.equal(
      describeEvent(heal([privileged])),
      "[dev] 0123456 self-heal: reverted apps/Deployment:shop/web /spec/template/spec/containers/0/securityContext (Succeeded) SECURITY: privileged at /spec/template/spec/containers/0/securityContext by kubectl-patch",
    );
    assert.doesNotMatch(describeEvent(heal([{ ...privileged, security: undefined }])), /SECURITY/);
  });
});
