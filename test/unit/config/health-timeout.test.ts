// syncPolicy.healthTimeout: the deadline for a wave to become Healthy, a Go-style duration.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";

const config = (syncPolicy: Record<string, unknown>) =>
  stringify({
    environments: [{ name: "dev", source: { path: "." }, destination: { namespace: "dev" }, syncPolicy }],
  });

describe("syncPolicy.healthTimeout", () => {
  it("is absent unless set (the engine then waits 5 minutes), and read as milliseconds", () => {
    assert.equal(parseConfig(config({})).environments[0]?.syncPolicy.healthTimeout, undefined);
    assert.equal(
      parseConfig(config({ healthTimeout: "90s" })).environments[0]?.syncPolicy.healthTimeout,
      90_000,
    );
    assert.equal(
      parseConfig(config({ healthTimeout: "1h" })).environments[0]?.syncPolicy.healthTimeout,
      3_600_000,
    );
  });

  it("refuses what is not a duration of at least a second, naming the field", () => {
    for (const [value, problem] of [
      ["soon", /environments\[0\]\.syncPolicy\.healthTimeout: must be a duration like "30s"/],
      ["500ms", /environments\[0\]\.syncPolicy\.healthTimeout: must be at least 1s/],
    ] as const) {
      assert.throws(
        () => parseConfig(config({ healthTimeout: value })),
        (err) => err instanceof ConfigError && problem.test(err.message),
      );
    }
  });
});
