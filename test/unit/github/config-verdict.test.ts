// The config check's conclusion: a loosened production guard is never green or grey.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configVerdict } from "../../../src/github/config-check.ts";

type Given = Parameters<typeof configVerdict>[0];
const none: Given = { userProblems: 0, unreadable: 0, loosened: [], production: [], changed: 1 };

describe("configVerdict", () => {
  const cases: Array<
    [string, Partial<typeof none> & { loosened?: string[]; production?: string[] }, string, RegExp]
  > = [
    ["a change that loosens nothing", {}, "success", /^Valid; changes 1 environment\(s\)$/],
    ["a loosened dev", { loosened: ["dev"] }, "neutral", /^Valid; loosens the guards of dev$/],
    [
      "a loosened prod",
      { loosened: ["dev", "prod"], production: ["prod"] },
      "action_required",
      /^Loosens the production guards of prod$/,
    ],
    [
      "an approver no account has, even with prod loosened",
      { userProblems: 1, loosened: ["prod"], production: ["prod"] },
      "failure",
      /no GitHub account/,
    ],
    ["an unreadable team", { unreadable: 1 }, "neutral", /cannot be resolved/],
  ];
  for (const [name, given, conclusion, title] of cases)
    it(name, () => {
      const v = configVerdict({ ...none, ...given });
      assert.equal(v.conclusion, conclusion);
      assert.match(v.title, title);
      assert.ok(v.next.length > 0 && !v.next.includes("\n"));
    });
});
