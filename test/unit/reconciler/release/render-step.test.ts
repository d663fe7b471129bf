import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeApiError, KubeConnectionError } from "../../../../src/kube/errors.ts";
import { stateReadFailure } from "../../../../src/reconciler/release/read-state.ts";
import { allowedRenderOf, renderFailure } from "../../../../src/reconciler/release/render-step.ts";
import { SourceError } from "../../../../src/source/errors.ts";
import type { RenderedSource } from "../../../../src/source/render.ts";

const SHA = "abcdef0123456789".padEnd(40, "0");
const OTHER = "f".repeat(40);
const rendered: RenderedSource = { objects: [], files: new Map(), lines: new Map(), renderer: "directory" };

describe("the render an attempt applies", () => {
  it("a retry of the revision the gate let through: exactly that render", () =>
    assert.equal(allowedRenderOf({ revision: SHA, rendered }, SHA), rendered));
  it("another revision (a retry that moved): a fresh render", () =>
    assert.equal(allowedRenderOf({ revision: SHA, rendered }, OTHER), undefined));
  it("nothing let through yet: a fresh render", () =>
    assert.equal(allowedRenderOf(undefined, SHA), undefined));
});

describe("a render that could not be made", () => {
  const rows: Array<
    [string, unknown, { phase: string; message: string; retryable: boolean; unfetched: boolean }]
  > = [
    [
      "the revision's own fault (a SourceError): an Error, not retried",
      new SourceError("kustomization.yaml: unknown field"),
      {
        phase: "Error",
        message: "render failed: kustomization.yaml: unknown field",
        retryable: false,
        unfetched: false,
      },
    ],
    [
      "GitHub down: Failed, retried, and not the revision's fault",
      Object.assign(new Error("Bad Gateway"), { status: 502 }),
      { phase: "Failed", message: "fetching abcdef0 failed: Bad Gateway", retryable: true, unfetched: true },
    ],
    [
      "any other error is a fetch that failed too",
      new TypeError("socket hang up"),
      {
        phase: "Failed",
        message: "fetching abcdef0 failed: socket hang up",
        retryable: true,
        unfetched: true,
      },
    ],
  ];
  for (const [name, err, want] of rows)
    it(name, () => {
      const { outcome, unfetched } = renderFailure(err, SHA, false);
      assert.deepEqual(
        { phase: outcome.phase, message: outcome.message, retryable: outcome.retryable, unfetched },
        want,
      );
      assert.equal(outcome.revision, SHA);
    });
  it("keeps a dry run's flag", () =>
    assert.equal(renderFailure(new SourceError("x"), SHA, true).outcome.dryRun, true));
});

describe("a state that could not be read", () => {
  const api = (status: number, message = `status ${status}`) =>
    new KubeApiError(message, status, "", "GET", "/api/v1/configmaps");
  const denied = `configmaps "x" is forbidden: User "system:serviceaccount:syncward:syncward" cannot get resource "configmaps" in API group "" in the namespace "syncward"`;
  const rows: Array<[string, unknown, boolean]> = [
    ["an API server outage (503) is retried", api(503), true],
    ["a 403 from an API server still loading its RBAC is retried", api(403, denied), true],
    [
      "a connection refused is retried",
      new KubeConnectionError("connect ECONNREFUSED", "ECONNREFUSED"),
      true,
    ],
    ["a 404 is not", api(404), false],
    ["an unexpected error is not", new Error("boom"), false],
  ];
  for (const [name, err, retryable] of rows)
    it(name, () => {
      const outcome = stateReadFailure(err, SHA, false);
      assert.equal(outcome.phase, "Failed");
      assert.equal(outcome.retryable, retryable);
      assert.match(outcome.message, /^reading the environment's state failed: /);
    });
});
