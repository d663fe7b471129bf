// A failure in a command's path, as the commenter reads it: what it means and what to do; a
// status code is the cause, never the whole message.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { explainFailure, whatWasAsked } from "../../../src/github/explain-error.ts";
import { deployedCommitGone } from "../../../src/github/rewritten-history.ts";
import { KubeApiError, KubeConnectionError } from "../../../src/kube/errors.ts";

const A = "a".repeat(40);
const B = "b".repeat(40);

/** An error as Octokit throws it. */
function gitHubError(status: number, url: string, message = "x", headers: Record<string, string> = {}) {
  return Object.assign(new Error(message), {
    status,
    request: { method: "GET", url: `https://api.github.com${url}` },
    response: { headers },
  });
}

describe("explainFailure", () => {
  const cases: Array<[string, unknown, RegExp, RegExp]> = [
    [
      "GitHub 404 on a pull request",
      gitHubError(404, "/repos/acme/shop/pulls/7", "Not Found"),
      /GitHub does not know pull request #7, or does not show it to syncward \(GitHub said `Not Found`, 404\): it was deleted, renamed or rewritten/,
      /check that pull request #7 still exists/,
    ],
    [
      "GitHub 403 (a missing permission)",
      gitHubError(403, "/orgs/acme/teams/sre/memberships/tom", "Resource not accessible by integration"),
      /does not let syncward's GitHub App read team acme\/sre .*the installation lacks a permission/,
      /an owner accepts the permissions/,
    ],
    [
      "GitHub's rate limit",
      gitHubError(403, "/repos/acme/shop/compare/x...y", "API rate limit exceeded", { "retry-after": "120" }),
      /GitHub's rate limit for syncward is spent/,
      /again in 2 minutes/,
    ],
    [
      "GitHub down",
      gitHubError(502, "/repos/acme/shop/pulls/7", "Bad Gateway"),
      /GitHub did not answer .*an outage on GitHub's side/,
      /again in a few minutes/,
    ],
    [
      "the cluster forbids",
      new KubeApiError(
        'configmaps "x" is forbidden: User "system:serviceaccount:syncward:syncward" cannot get resource "configmaps" in API group "" in the namespace "syncward"',
        403,
        "Forbidden",
        "GET",
        "/api/v1/namespaces/syncward/configmaps/x",
      ),
      /The cluster refused syncward: `forbidden: cannot get configmaps in namespace "syncward" \(as system:serviceaccount:syncward:syncward\)`/,
      /grants syncward's service account that permission/,
    ],
    [
      "the cluster unreachable, wrapped",
      new Error("state", {
        cause: new KubeConnectionError("connect ECONNREFUSED 10.0.0.1:443", "ECONNREFUSED"),
      }),
      /could not reach the cluster's API server \(`connect ECONNREFUSED 10\.0\.0\.1:443`\)/,
      /checks syncward's connection to the cluster/,
    ],
    ["anything else", new Error("boom"), /syncward failed inside \(`boom`\)/, /syncward's log/],
  ];
  for (const [name, err, what, next] of cases)
    it(name, () => {
      const e = explainFailure(err, "/approve");
      assert.match(e.what, /^`\/approve` did not run to the end: /);
      assert.match(e.what, what);
      assert.match(e.next, next);
      assert.doesNotMatch(e.next, /\n/);
    });

  it("a status code alone is never the message", () => {
    for (const status of [400, 401, 403, 404, 409, 422, 500, 503]) {
      const e = explainFailure(gitHubError(status, "/repos/acme/shop/pulls/7"), "/sync");
      assert.ok(e.what.replace(/\(.*?\)/g, "").length > 60, e.what);
    }
  });
});

describe("whatWasAsked", () => {
  const cases: Array<[string, string]> = [
    [`/repos/acme/shop/compare/${A}...${B}?per_page=100`, "the commits from aaaaaaa to bbbbbbb"],
    [`/repos/acme/shop/commits/${A}/pulls`, "commit aaaaaaa"],
    ["/repos/acme/shop/contents/.github%2Fsyncward.yml", "the file .github/syncward.yml"],
    ["/repos/acme/shop/branches/main", "`/repos/acme/shop/branches/main`"],
  ];
  for (const [url, said] of cases)
    it(url, () => assert.equal(whatWasAsked(`https://api.github.com${url}`), said));
});

describe("deployedCommitGone", () => {
  it("is the compare's 404 from the deployed commit, nothing else", () => {
    const compare = gitHubError(404, `/repos/acme/shop/compare/${A}...${B}`);
    assert.equal(deployedCommitGone(compare, A), true);
    assert.equal(deployedCommitGone(compare, B), false, "another base");
    assert.equal(deployedCommitGone(compare, undefined), false, "a first deployment has no base");
    assert.equal(deployedCommitGone(gitHubError(500, `/repos/acme/shop/compare/${A}...${B}`), A), false);
    assert.equal(deployedCommitGone(gitHubError(404, "/repos/acme/shop/pulls/7"), A), false);
  });
});
