// The API server quotes some of what it is sent in its errors. For a Secret, that is a secret
// value: checked on the real API server, the error syncward keeps has it masked.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeApiError } from "../../src/kube/errors.ts";
import { useCluster } from "../support/cluster.ts";

const cluster = useCluster();

describe("errors about a Secret", () => {
  it("mask the values the API server quotes back", async () => {
    const ns = await cluster.namespace("secret-err");
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "creds", namespace: ns },
      // Past the source layer's check (which refuses it earlier): a number the server quotes.
      stringData: { pin: 987654321, password: "sw-quoted-secret-41x" },
    };
    const err = await cluster.client.apply(secret as never, { dryRun: true }).then(
      () => assert.fail("the API server should refuse a number in stringData"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof KubeApiError, String(err));
    assert.match(err.message, /stringData\.pin: expected string, got .*Value:\*{8}/);
    assert.doesNotMatch(err.message, /987654321/);
  });

  it("mask them on a real apply too, not only a dry run", async () => {
    const ns = await cluster.namespace("secret-apply");
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "creds", namespace: ns },
      stringData: { pin: 123456789012, password: "sw-applied-secret-58q" },
    };
    const err = await cluster.client.apply(secret as never).then(
      () => assert.fail("the API server should refuse a number in stringData"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof KubeApiError, String(err));
    assert.match(err.message, /stringData\.pin/);
    assert.doesNotMatch(err.message, /123456789012|sw-applied-secret-58q/);
  });
});
