// The one line `syncward:` prints for an error a person can fix: what it means and what to do.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { oneLine } from "../../../src/cli/errors.ts";
import { KubeApiError, KubeConnectionError } from "../../../src/kube/errors.ts";

describe("oneLine", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    [
      "RBAC refuses",
      new KubeApiError(
        'deployments.apps "web" is forbidden: User "dev" cannot patch resource "deployments" in API group "apps" in the namespace "shop"',
        403,
        "Forbidden",
        "PATCH",
        "/apis/apps/v1/namespaces/shop/deployments/web",
      ),
      /^the API server refused PATCH \/apis\/apps\/v1\/namespaces\/shop\/deployments\/web: forbidden: cannot patch deployments\.apps in namespace "shop" \(as dev\); use a --context whose identity may do that, or have a cluster admin grant it$/,
    ],
    [
      "expired credentials",
      new KubeApiError("Unauthorized", 401, "Unauthorized", "GET", "/api/v1/namespaces"),
      /did not accept the credentials of your kubeconfig .*log in to the cluster again/,
    ],
    [
      "an overloaded API server",
      new KubeApiError("etcdserver: request timed out", 504, "Timeout", "GET", "/api/v1/configmaps"),
      /\(504 Timeout\): it is overloaded or restarting; try again in a minute$/,
    ],
    [
      "no cluster at all",
      new KubeConnectionError("connect ECONNREFUSED 127.0.0.1:6443", "ECONNREFUSED"),
      /ECONNREFUSED .*\(check --kubeconfig and --context\)$/,
    ],
  ];
  for (const [name, err, line] of cases) it(name, () => assert.match(oneLine(err) ?? "", line));

  it("leaves an unexpected error to the caller", () => assert.equal(oneLine(new Error("bug")), undefined));
});
