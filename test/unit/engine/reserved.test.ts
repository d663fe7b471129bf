// Reserved places: what no sync may write, whatever its project allows (engine/reserved.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  reservedDestinationProblems,
  reservedObjectProblem,
  reservedPlaces,
} from "../../../src/engine/reserved.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const reserved = reservedPlaces(["sw-state"], { SYNCWARD_RESERVED_NAMESPACES: "vault, ingress-system" });
const obj = (apiVersion: string, kind: string, name: string, namespace?: string, extra = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  ...extra,
});

describe("reserved places", () => {
  it("holds the built-in, state and operator-listed namespaces", () => {
    assert.deepEqual([...reserved.namespaces].sort(), [
      "ingress-system",
      "kube-node-lease",
      "kube-public",
      "kube-system",
      "sw-state",
      "syncward",
      "vault",
    ]);
  });

  const refused: Array<[string, KubeObject, boolean]> = [
    [
      "the projects ConfigMap in the state namespace",
      obj("v1", "ConfigMap", "syncward-projects", "sw-state"),
      true,
    ],
    ["anything in kube-system", obj("v1", "ConfigMap", "x", "kube-system"), true],
    [
      "a namespaced object defaulted into syncward's namespace",
      obj("v1", "ServiceAccount", "syncward"),
      true,
    ],
    ["syncward's namespace itself", obj("v1", "Namespace", "syncward"), false],
    ["syncward's ClusterRole", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "syncward-manager"), false],
    [
      "a webhook configuration of syncward's name",
      obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "syncward"),
      false,
    ],
    [
      "a RoleBinding handing out syncward's ClusterRole",
      obj("rbac.authorization.k8s.io/v1", "RoleBinding", "steal", "team-a", {
        roleRef: { kind: "ClusterRole", name: "syncward-manager" },
      }),
      true,
    ],
  ];
  for (const [name, o, namespaced] of refused)
    it(`refuses ${name}`, () => {
      assert.match(
        reservedObjectProblem(reserved, o, namespaced, "syncward") ?? "",
        /reserved|syncward's own|only the operator/,
      );
    });

  it("lets an ordinary object in a tenant namespace through", () => {
    assert.equal(reservedObjectProblem(reserved, obj("v1", "ConfigMap", "x"), true, "team-a"), undefined);
    assert.equal(
      reservedObjectProblem(
        reserved,
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", "team-a-reader"),
        false,
        "",
      ),
      undefined,
    );
  });

  it("names a destination or policy namespace that is reserved", () => {
    const env = {
      name: "dev",
      destination: { namespace: "team-a" },
      policy: { namespaces: ["team-a", "kube-system"] },
    };
    assert.deepEqual(reservedDestinationProblems(env, reserved), [
      "environment dev: policy.namespaces \"kube-system\" is reserved (syncward's own, its state's, Kubernetes' or the operator's): no repository deploys there, whatever its project allows",
    ]);
  });
});
