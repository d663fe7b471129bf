// `rollback`: what the file accepts, and the errors, each naming the field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";

const FILE = ".github/syncward.yml";
const AUTOMATED = { automated: { prune: true, selfHeal: true } };

function env(rollback: unknown, syncPolicy: unknown = AUTOMATED): Record<string, unknown> {
  return { name: "dev", source: { path: "k8s" }, destination: { namespace: "dev" }, syncPolicy, rollback };
}

function problemsOf(environment: Record<string, unknown>): string[] {
  try {
    parseConfig(stringify({ environments: [environment] }), FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => p.slice(FILE.length + 2));
  }
  assert.fail("the config was accepted");
}

describe("rollback config", () => {
  it("accepts onDegraded with the opt-ins off by default", () => {
    const config = parseConfig(stringify({ environments: [env({ onDegraded: "5m" })] }), FILE);
    assert.deepEqual(config.environments[0]?.rollback, {
      onDegraded: 300_000,
      acrossCRDChanges: false,
      acrossHooks: false,
    });
    const opted = parseConfig(
      stringify({ environments: [env({ onDegraded: "30s", acrossCRDChanges: true, acrossHooks: true })] }),
      FILE,
    );
    assert.deepEqual(opted.environments[0]?.rollback, {
      onDegraded: 30_000,
      acrossCRDChanges: true,
      acrossHooks: true,
    });
  });

  it("refuses a manual environment, a bad duration and unknown keys, naming the field", () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        "no syncPolicy.automated",
        env({ onDegraded: "5m" }, {}),
        /^environments\[0\]\.rollback\.onDegraded: dev rolls back on its own only with syncPolicy\.automated/,
      ],
      [
        "a duration below a second",
        env({ onDegraded: "10ms" }),
        /^environments\[0\]\.rollback\.onDegraded: must be at least 1s/,
      ],
      [
        "not a duration",
        env({ onDegraded: "soon" }),
        /^environments\[0\]\.rollback\.onDegraded: must be a duration/,
      ],
      ["a missing duration", env({}), /^environments\[0\]\.rollback\.onDegraded/],
      [
        "a duration past a day (a timer that long would fire at once)",
        env({ onDegraded: "1000h" }),
        /^environments\[0\]\.rollback\.onDegraded: must be at most 24h/,
      ],
      [
        "an unknown key",
        env({ onDegraded: "5m", onFailure: true }),
        /^environments\[0\]\.rollback.*onFailure/,
      ],
    ];
    for (const [name, environment, want] of cases) {
      const problems = problemsOf(environment);
      assert.ok(
        problems.some((p) => want.test(p)),
        `${name}: ${problems.join(" | ")}`,
      );
    }
  });
});
