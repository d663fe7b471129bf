import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { apiVersionsOf } from "../../../src/kube/capabilities.ts";

describe("apiVersionsOf", () => {
  it("lists each group version and each version/Kind, without subresources, sorted", () => {
    assert.deepEqual(
      apiVersionsOf([
        {
          groupVersion: "v1",
          resources: [
            { name: "pods", kind: "Pod" },
            { name: "pods/status", kind: "Pod" },
            { name: "configmaps", kind: "ConfigMap" },
          ],
        },
        {
          groupVersion: "policy/v1",
          resources: [{ name: "poddisruptionbudgets", kind: "PodDisruptionBudget" }],
        },
        { groupVersion: "metrics.k8s.io/v1beta1", resources: [] },
      ]),
      [
        "metrics.k8s.io/v1beta1",
        "policy/v1",
        "policy/v1/PodDisruptionBudget",
        "v1",
        "v1/ConfigMap",
        "v1/Pod",
      ],
    );
  });
});
