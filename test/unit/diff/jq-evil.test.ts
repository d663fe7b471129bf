// The hostile jq corpus (test/fixtures/diff/jq-evil/): jqPathExpressions that try to read the
// environment or input, stop jq, break out of the program syncward wraps them in, or spend time
// and memory without end. Each goes through a real comparison and ends, within a bound, in an
// IgnoreRuleError that names the rule; an honest rule evaluated afterwards still works.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { compareObjects, IgnoreRuleError } from "../../../src/engine/diff/index.ts";
import { FIXTURES, fixture, rule } from "./fixtures.ts";

const DIR = join(FIXTURES, "jq-evil");
const desired = fixture("deployment.desired.yaml");
const scaled = fixture("deployment.live-scaled.yaml");

const cases = readdirSync(DIR)
  .filter((f) => f.endsWith(".jq"))
  .sort()
  .map((f) => {
    const expression = readFileSync(join(DIR, f), "utf8");
    const expect = /^# expect: (.*)$/m.exec(expression)?.[1];
    assert.ok(expect, `${f} names what it expects`);
    return { name: f.replace(/\.jq$/, ""), expression, expect: new RegExp(expect) };
  });

describe("hostile jqPathExpressions", () => {
  it("the corpus is there", () => assert.ok(cases.length >= 15));
  for (const c of cases) {
    it(`${c.name}: refused with a message naming the rule`, () => {
      const started = Date.now();
      const rules = [
        rule({ group: "apps", kind: "Deployment", name: "web", jqPathExpressions: [c.expression] }),
      ];
      assert.throws(
        () => compareObjects(desired, scaled, { ignoreDifferences: rules }),
        (err: unknown) => {
          assert.ok(err instanceof IgnoreRuleError, String(err));
          assert.match(
            err.message,
            /^ignoreDifferences\[0\] \(group apps, kind Deployment, name web\): jqPathExpressions /,
          );
          assert.match(err.message, c.expect);
          assert.ok(!err.message.includes(process.env.HOME ?? "\0"), "no environment value in the message");
          return true;
        },
      );
      // The deadline is 1 s; starting a fresh engine after a kill is part of the bound.
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      const honest = [rule({ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.replicas"] })];
      assert.equal(compareObjects(desired, scaled, { ignoreDifferences: honest }).inSync, true);
    });
  }
});
