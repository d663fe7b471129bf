import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelay, isRetryableError, syncWithRetry } from "../../../src/engine/retry.ts";
import type { SyncOutcome } from "../../../src/engine/sync.ts";
import { isTransient, KubeApiError, KubeConnectionError } from "../../../src/kube/errors.ts";

const policy = (limit: number) => ({ limit, backoff: { duration: 5, factor: 2, maxDuration: 20 } });

function outcome(phase: SyncOutcome["phase"], retryable: boolean, revision = "r1"): SyncOutcome {
  const now = new Date().toISOString();
  return {
    revision,
    phase,
    message: `${phase} at ${revision}`,
    resources: [],
    startedAt: now,
    finishedAt: now,
    writes: 0,
    dryRun: false,
    inventory: [],
    retryable,
    totals: { created: 0, configured: 0, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
  };
}

describe("syncWithRetry", () => {
  it("follows Argo CD's backoff: duration x factor^n, capped at maxDuration", () => {
    const p = { limit: 5, backoff: { duration: 5000, factor: 2, maxDuration: 180_000 } };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(p, n)),
      [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 180_000],
    );
  });

  it("retries transient failures, each attempt at the revision its caller gives", async () => {
    const seen: number[] = [];
    const result = await syncWithRetry(policy(3), async (n) => {
      seen.push(n);
      return n < 3 ? outcome("Failed", true, `r${n}`) : outcome("Succeeded", false, `r${n}`);
    });
    assert.deepEqual(seen, [1, 2, 3]);
    assert.equal(result.phase, "Succeeded");
    assert.equal(result.revision, "r3");
    assert.equal(result.attempts, 3);
  });

  it("gives up after the limit and says so", async () => {
    const retries: number[] = [];
    const result = await syncWithRetry(policy(2), async () => outcome("Failed", true), {
      onRetry: (n) => retries.push(n),
    });
    assert.equal(result.phase, "Failed");
    assert.equal(result.attempts, 3);
    assert.match(result.message, /\(gave up after 3 attempts\)$/);
    assert.deepEqual(retries, [1, 2]);
  });

  it("retries a sync that failed for a permanent reason too (a 422, a failed hook), as Argo CD does", async () => {
    let calls = 0;
    const r = await syncWithRetry(policy(2), async () => {
      calls++;
      return outcome("Failed", false);
    });
    assert.equal(calls, 3);
    assert.equal(r.phase, "Failed");
    assert.match(r.message, /\(gave up after 3 attempts\)$/);
  });

  const stops: Array<[string, SyncOutcome]> = [
    ["a refusal", outcome("Refused", false)],
    ["a render or validation error", outcome("Error", false)],
  ];
  for (const [what, result] of stops) {
    it(`does not retry ${what}`, async () => {
      let calls = 0;
      const r = await syncWithRetry(policy(5), async () => {
        calls++;
        return result;
      });
      assert.equal(calls, 1);
      assert.equal(r.phase, result.phase);
    });
  }

  it("stops waiting to retry when aborted, and rejects instead of returning a failure to record", async () => {
    const stop = new AbortController();
    let calls = 0;
    const pending = syncWithRetry(
      { limit: 5, backoff: { duration: 60_000, factor: 2, maxDuration: 180_000 } },
      async () => {
        calls++;
        return outcome("Failed", true);
      },
      { signal: stop.signal, onRetry: () => stop.abort() },
    );
    await assert.rejects(pending);
    assert.equal(calls, 1);
  });

  it("returns, without retrying, the outcome of an attempt stopped while it ran (its writes are recorded)", async () => {
    const stop = new AbortController();
    let calls = 0;
    const result = await syncWithRetry(
      policy(5),
      async () => {
        calls++;
        stop.abort(); // SIGTERM while the attempt waits for a wave to become healthy
        return { ...outcome("Failed", false), message: "stopped while waiting for service/front" };
      },
      { signal: stop.signal },
    );
    assert.equal(calls, 1);
    assert.equal(result.phase, "Failed");
    assert.equal(result.message, "stopped while waiting for service/front");
  });

  it("retries an error thrown during an attempt when it is transient, and lists it among the retried", async () => {
    const retried: string[] = [];
    const result = await syncWithRetry(
      policy(3),
      async (n) => {
        if (n < 3) throw Object.assign(new Error("GitHub: Bad Gateway"), { status: 502 });
        return outcome("Succeeded", false);
      },
      { revision: "r1", onRetry: (_n, failed) => retried.push(`${failed.revision}: ${failed.message}`) },
    );
    assert.equal(result.phase, "Succeeded");
    assert.equal(result.attempts, 3);
    assert.deepEqual(retried, ["r1: GitHub: Bad Gateway", "r1: GitHub: Bad Gateway"]);
  });

  it("fails at once, with the error's message, when an attempt throws a permanent error (a 404)", async () => {
    let calls = 0;
    const retried: number[] = [];
    const result = await syncWithRetry(
      policy(5),
      async () => {
        calls++;
        throw Object.assign(new Error("Not Found"), { status: 404 });
      },
      { revision: "r1", dryRun: true, onRetry: (n) => retried.push(n) },
    );
    assert.equal(calls, 1);
    assert.deepEqual(retried, []);
    assert.equal(result.phase, "Failed");
    assert.equal(result.message, "Not Found");
    assert.equal(result.revision, "r1");
    assert.equal(result.dryRun, true);
  });

  it("does not retry at all with limit 0", async () => {
    let calls = 0;
    await syncWithRetry(policy(0), async () => {
      calls++;
      return outcome("Failed", true);
    });
    assert.equal(calls, 1);
  });
});

describe("transient errors", () => {
  const cases: Array<[string, unknown, boolean]> = [
    [
      "503 from an overloaded API server",
      new KubeApiError("unavailable", 503, "ServiceUnavailable", "PATCH", "/x"),
      true,
    ],
    ["429 too many requests", new KubeApiError("slow down", 429, "TooManyRequests", "PATCH", "/x"), true],
    [
      "500 from a webhook that is down",
      new KubeApiError(
        'Internal error occurred: failed calling webhook "x"',
        500,
        "InternalError",
        "PATCH",
        "/x",
      ),
      true,
    ],
    ["a refused connection", new KubeConnectionError("connect ECONNREFUSED", "ECONNREFUSED"), true],
    ["422 invalid", new KubeApiError("Service is invalid", 422, "Invalid", "PATCH", "/x"), false],
    ["403 forbidden", new KubeApiError("forbidden", 403, "Forbidden", "PATCH", "/x"), false],
    [
      "500 for a field not in the schema (SSA)",
      new KubeApiError(
        "failed to create typed patch object (a/b): .x: field not declared in schema",
        500,
        "",
        "PATCH",
        "/x",
      ),
      false,
    ],
    ["a plain Error", new Error("boom"), false],
  ];
  for (const [what, err, expected] of cases) {
    it(`${what} is ${expected ? "" : "not "}worth a retry`, () => {
      assert.equal(isTransient(err), expected);
      assert.equal(isRetryableError(err), expected);
    });
  }
  const others: Array<[string, unknown, boolean]> = [
    ["a GitHub 503", { status: 503, message: "unavailable" }, true],
    ["a GitHub 429", { status: 429 }, true],
    ["a 408 timeout", { status: 408 }, true],
    ["an error that says it is retryable", Object.assign(new Error("x"), { retryable: true }), true],
    ["a GitHub 404", { status: 404 }, false],
    ["a GitHub 422", { status: 422 }, false],
    ["undefined", undefined, false],
  ];
  for (const [what, err, expected] of others) {
    it(`${what} thrown in an attempt is ${expected ? "" : "not "}worth a retry`, () =>
      assert.equal(isRetryableError(err), expected));
  }
});
