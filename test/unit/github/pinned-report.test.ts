// What a pinned environment shows on GitHub: the check run's first line, status and Next line,
// and the deployment status's description (within GitHub's 140 characters).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CheckRunOutputInput,
  checkRunOutput,
  deploymentDescription,
} from "../../../src/github/summary.ts";
import { pinnedText, pinOf } from "../../../src/reconciler/pin.ts";
import { envConfig, resultOf, SHA, stateOf } from "../../support/summary-fixtures.ts";

const pin = pinOf({ id: 3, revision: SHA }, "alice", "", new Date("2026-01-01T00:00:00Z"));

function input(overrides: Partial<CheckRunOutputInput> = {}): CheckRunOutputInput {
  return {
    env: envConfig(),
    state: stateOf({ pin }),
    repoBranch: "main",
    effectivePolicy: "Automated (Prune, SelfHeal)",
    ...overrides,
  };
}

describe("a pin, as text", () => {
  it("names the commit, who, the history entry and how to resume", () =>
    assert.equal(
      pinnedText(pin, "prod"),
      "pinned at a1b2c3d by alice (rollback to history 3); /unpin prod resumes",
    ));
  it("brief: the commit and how to resume", () =>
    assert.equal(pinnedText(pin, "prod", undefined, true), "pinned at a1b2c3d; /unpin prod resumes"));
});

describe("the check run of a pinned environment", () => {
  const out = checkRunOutput(input({ result: resultOf() }));
  it("says in its first line where it is pinned, by whom, and how to resume", () =>
    assert.equal(
      out.summary.split("\n")[0],
      "**prod** runs `a1b2c3d` in namespace `shop` on `prod-eu`; pinned at `a1b2c3d` by `alice` (rollback to history 3); `/unpin prod` resumes.",
    ));
  it("is synced to its pin, not to the branch", () =>
    assert.match(out.summary, /^- \*\*Sync Status:\*\* Synced to pin \(`a1b2c3d`\)$/m));
  it("ends with the way back to the branch", () =>
    assert.match(
      out.text,
      /\*\*Next:\*\* comment `\/unpin prod` when `main` is fit to deploy again: until then prod stays at `a1b2c3d`\.$/,
    ));
  it("a login that looks like markup stays text", () => {
    const odd = checkRunOutput(
      input({ state: stateOf({ pin: { ...pin, by: "<b>@x</b>" } }), result: resultOf() }),
    );
    assert.match(odd.summary.split("\n")[0] ?? "", /by `<b>@x<\/b>`/);
  });
  it("an environment that is not pinned says nothing of pins", () => {
    const plain = checkRunOutput(input({ state: stateOf(), result: resultOf() }));
    assert.doesNotMatch(`${plain.summary}${plain.text}`, /pinned|unpin/);
  });
});

describe("the deployment status of a pinned environment", () => {
  const rows: Array<[string, Parameters<typeof deploymentDescription>, string]> = [
    [
      "a success says the pin whole",
      [resultOf(), undefined, { pin, env: "prod" }],
      "pinned at a1b2c3d by alice (rollback to history 3); /unpin prod resumes",
    ],
    [
      "long names: who and which entry give way, the way back stays",
      [resultOf(), undefined, { pin: { ...pin, by: "a".repeat(39) }, env: "e".repeat(63) }],
      `pinned at a1b2c3d; /unpin ${"e".repeat(63)} resumes`,
    ],
    [
      "a failure says the pin, then what failed",
      [resultOf({ phase: "Failed", message: "1 failed", resources: [] }), undefined, { pin, env: "prod" }],
      "pinned at a1b2c3d; /unpin prod resumes; failed: 1 failed",
    ],
  ];
  for (const [name, args, want] of rows)
    it(name, () => {
      const got = deploymentDescription(...args);
      assert.equal(got, want);
      assert.ok(got.length <= 140);
    });
  it("a failure with a long error is cut to 140 characters", () => {
    const got = deploymentDescription(
      resultOf({ phase: "Failed", message: "x ".repeat(200), resources: [] }),
      undefined,
      {
        pin,
        env: "prod",
      },
    );
    assert.ok(got.startsWith("pinned at a1b2c3d; /unpin prod resumes; failed: x x"));
    assert.ok(got.length <= 140);
  });
});
