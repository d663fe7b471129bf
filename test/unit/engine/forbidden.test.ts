// A request RBAC refuses, as a person reads it: the verb and resource to grant, in the object's
// result and in the check run, and nothing more of the request.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { errorMessage } from "../../../src/engine/resource-results.ts";
import { checkRunOutput } from "../../../src/github/summary.ts";
import { describeForbidden, isTransient, KubeApiError } from "../../../src/kube/errors.ts";
import { envConfig, resource, resultOf, stateOf } from "../../support/summary-fixtures.ts";

const SA = "system:serviceaccount:syncward:syncward";
// The API server's words, as the local control plane answered them.
const listClusterRoles = new KubeApiError(
  `clusterroles.rbac.authorization.k8s.io is forbidden: User "${SA}" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
  403,
  "Forbidden",
  "GET",
  "/apis/rbac.authorization.k8s.io/v1/clusterroles",
);
const patchPod = new KubeApiError(
  `pods "x" is forbidden: User "${SA}" cannot patch resource "pods" in API group "" in the namespace "shop"`,
  403,
  "Forbidden",
  "PATCH",
  "/api/v1/namespaces/shop/pods/x",
);

describe("forbidden requests", () => {
  it("name the verb, the resource with its group, and the scope", () => {
    assert.equal(
      describeForbidden(listClusterRoles),
      `forbidden: cannot list clusterroles.rbac.authorization.k8s.io at the cluster scope (as ${SA})`,
    );
    assert.equal(
      describeForbidden(patchPod),
      `forbidden: cannot patch pods in namespace "shop" (as ${SA})`,
      "the core group adds no suffix",
    );
  });

  it("are permanent: never retried", () => {
    assert.equal(isTransient(listClusterRoles), false);
    assert.equal(listClusterRoles.forbidden, true);
  });

  it("leave admission refusals (Pod Security, quota) in the API server's words", () => {
    const admission = new KubeApiError(
      'pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      403,
      "Forbidden",
      "PATCH",
      "/api/v1/namespaces/shop/pods/x",
    );
    assert.equal(describeForbidden(admission), undefined);
    assert.equal(admission.forbidden, false);
    assert.match(errorMessage(admission), /violates PodSecurity/);
  });

  it("say where to grant it in the object's result", () => {
    assert.equal(
      errorMessage(patchPod),
      `forbidden: cannot patch pods in namespace "shop" (as ${SA}); grant it in syncward's RBAC (deploy/) if syncward should manage it`,
    );
  });

  it("appear per object in the check run's table and errors, next to objects that synced", () => {
    const denied = resource({
      group: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      namespace: "",
      name: "reader",
      status: "Failed",
      action: "failed",
      health: undefined,
      message: `clusterrole.rbac.authorization.k8s.io/reader failed: ${errorMessage(listClusterRoles)}`,
    });
    const synced = resource({
      group: "",
      kind: "ConfigMap",
      name: "settings",
      action: "created",
      message: "configmap/settings created",
    });
    const result = resultOf({ phase: "Failed", message: "wave 0 failed: ...", resources: [denied, synced] });
    const out = checkRunOutput({
      env: envConfig(),
      state: stateOf(),
      repoBranch: "main",
      effectivePolicy: "Automated (Prune, SelfHeal)",
      result,
    });
    // The table's cell is short; the errors section has the whole message, once.
    const row = out.summary.split("\n").find((l) => l.startsWith("| ClusterRole "));
    assert.match(row ?? "", /reader failed: forbidden: cannot list clusterroles/);
    assert.match(
      out.summary,
      /forbidden: cannot list clusterroles\.rbac\.authorization\.k8s\.io at the cluster scope/,
    );
    assert.equal(out.summary.split("at the cluster scope").length - 1, 1, "the whole message appears once");
    assert.match(
      out.summary,
      /^- `clusterrole\.rbac\.authorization\.k8s\.io\/reader`:\s*\n`{3,}[^\n]*\n[^\n]*at the cluster scope/m,
    );
    assert.match(out.summary, /\| ConfigMap \|.*configmap\/settings created/);
  });
});
