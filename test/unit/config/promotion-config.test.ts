// `promotion`: what the file accepts, and the errors across environments (unknown names, cycles),
// each naming the field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import { cyclesOf } from "../../../src/config/promotion-graph.ts";

const FILE = ".github/syncward.yml";

function env(name: string, promotion?: unknown): Record<string, unknown> {
  return {
    name,
    source: { path: `overlays/${name}` },
    destination: { namespace: name },
    ...(promotion === undefined ? {} : { promotion }),
  };
}

function problemsOf(environments: unknown[]): string[] {
  try {
    parseConfig(stringify({ environments }), FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => p.slice(FILE.length + 2));
  }
  assert.fail("the config was accepted");
}

describe("promotion config", () => {
  it("accepts a name or a list, with durations and checks", () => {
    const cases: Array<[string, unknown, unknown]> = [
      [
        "one upstream",
        { after: "staging", healthyFor: "10m", checks: ["e2e"] },
        { after: ["staging"], healthyFor: 600_000, checks: ["e2e"] },
      ],
      [
        "a list, no checks",
        { after: ["staging", "canary"], healthyFor: "1h30m" },
        { after: ["staging", "canary"], healthyFor: 5_400_000, checks: [] },
      ],
      [
        "at once, a pinned check",
        { after: "staging", healthyFor: "0s", checks: [{ name: "e2e", app: "github-actions" }] },
        { after: ["staging"], healthyFor: 0, checks: [{ name: "e2e", app: "github-actions" }] },
      ],
    ];
    for (const [name, promotion, expected] of cases) {
      const config = parseConfig(
        stringify({ environments: [env("staging"), env("canary"), env("prod", promotion)] }),
        FILE,
      );
      assert.deepEqual(config.environments[2]?.promotion, expected, name);
      assert.equal(config.environments[0]?.promotion, undefined, name);
    }
  });

  it("refuses unknown names, itself, cycles and bad fields, naming the field", () => {
    const cases: Array<{ name: string; environments: unknown[]; problems: string[] }> = [
      {
        name: "unknown name, with a suggestion",
        environments: [env("staging"), env("prod", { after: "stagin", healthyFor: "10m" })],
        problems: [
          'environments[1].promotion.after: prod is promoted after "stagin", which is not an environment of this file (did you mean "staging"?); environments: staging, prod',
        ],
      },
      {
        name: "unknown name in a list points at its entry",
        environments: [env("staging"), env("prod", { after: ["staging", "qa"], healthyFor: "1m" })],
        problems: [
          'environments[1].promotion.after[1]: prod is promoted after "qa", which is not an environment of this file; environments: staging, prod',
        ],
      },
      {
        name: "after itself",
        environments: [env("prod", { after: "prod", healthyFor: "1m" })],
        problems: ["environments[0].promotion.after: prod cannot be promoted after itself"],
      },
      {
        name: "a cycle of two",
        environments: [
          env("staging", { after: "prod", healthyFor: "1m" }),
          env("prod", { after: "staging", healthyFor: "1m" }),
        ],
        problems: [
          "environments[0].promotion.after: promotion cycle: staging -> prod -> staging (each waits for the next, so none could ever deploy)",
        ],
      },
      {
        name: "a cycle of three through a list, reported once",
        environments: [
          env("dev", { after: ["qa"], healthyFor: "1m" }),
          env("staging", { after: ["dev"], healthyFor: "1m" }),
          env("qa", { after: ["canary", "staging"], healthyFor: "1m" }),
          env("canary"),
        ],
        problems: [
          "environments[0].promotion.after[0]: promotion cycle: dev -> qa -> staging -> dev (each waits for the next, so none could ever deploy)",
        ],
      },
      {
        name: "healthyFor required and a duration",
        environments: [env("staging"), env("prod", { after: "staging" })],
        problems: ["environments[1].promotion.healthyFor: required"],
      },
      {
        name: "healthyFor without a unit",
        environments: [env("staging"), env("prod", { after: "staging", healthyFor: "10" })],
        problems: [
          'environments[1].promotion.healthyFor: must be a duration like "30s", "5m" or "1h30m" (units ms, s, m, h), got "10"',
        ],
      },
      {
        name: "an empty list and an unknown field",
        environments: [env("staging"), env("prod", { after: [], healthyFor: "1m", afterr: 1 })],
        problems: [
          "environments[1].promotion.after: must have at least 1 item(s)",
          'environments[1].promotion.afterr: unknown field (did you mean "after"?)',
        ],
      },
    ];
    for (const c of cases) assert.deepEqual(problemsOf(c.environments), c.problems, c.name);
  });

  it("finds each cycle once, from its first environment in the file", () => {
    const cases: Array<[string, Array<{ name: string; after: string[] }>, string[][]]> = [
      [
        "a chain",
        [
          { name: "dev", after: [] },
          { name: "staging", after: ["dev"] },
          { name: "prod", after: ["staging", "dev"] },
        ],
        [],
      ],
      [
        "two cycles sharing an environment",
        [
          { name: "a", after: ["b"] },
          { name: "b", after: ["a", "c"] },
          { name: "c", after: ["b"] },
        ],
        [
          ["a", "b"],
          ["b", "c"],
        ],
      ],
      [
        "self and a diamond",
        [
          { name: "a", after: ["a"] },
          { name: "b", after: ["a"] },
          { name: "c", after: ["a"] },
          { name: "d", after: ["b", "c"] },
        ],
        [],
      ],
    ];
    for (const [name, envs, cycles] of cases) assert.deepEqual(cyclesOf(envs), cycles, name);
  });
});
