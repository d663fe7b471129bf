// The config check's changes by path: one line per value that moved, defaults are no change.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  approversText,
  changeLine,
  changeList,
  environmentChanges,
  MAX_LINES,
  pathChanges,
} from "../../../src/github/config-diff.ts";
import { envConfig } from "../../support/env.ts";

const lines = (before: Parameters<typeof envConfig>[1], after: Parameters<typeof envConfig>[1]) =>
  environmentChanges("prod", envConfig("shop", before), envConfig("shop", after)).map(changeLine);

describe("environmentChanges", () => {
  const cases: Array<[string, Parameters<typeof envConfig>[1], Parameters<typeof envConfig>[1], string[]]> = [
    [
      "one sync option",
      {},
      { syncPolicy: { syncOptions: ["Validate=false"] } },
      ["environments[prod].syncPolicy.syncOptions.Validate: true → false"],
    ],
    ["a default spelt out is no change", {}, { syncPolicy: { syncOptions: ["Validate=true"] } }, []],
    [
      "an approval rule removed: each of its fields",
      { approval: { users: ["carol"], minimum: 2 } },
      {},
      [
        'environments[prod].approval.users: ["carol"] → (unset)',
        "environments[prod].approval.teams: [] → (unset)",
        "environments[prod].approval.minimum: 2 → (unset)",
        "environments[prod].approval.allowAuthor: false → (unset)",
        "environments[prod].approval.trustedBots: [] → (unset)",
      ],
    ],
    [
      "a list of names whole",
      { approval: { users: ["carol", "dave"] } },
      { approval: { users: ["carol"] } },
      ['environments[prod].approval.users: ["carol","dave"] → ["carol"]'],
    ],
    [
      "a list of objects entry by entry",
      {},
      { syncWindows: [{ kind: "deny", schedule: "0 22 * * *", duration: "8h" }] },
      [
        'environments[prod].syncWindows[0].kind: "deny" (new)',
        'environments[prod].syncWindows[0].schedule: "0 22 * * *" (new)',
      ],
    ],
  ];
  for (const [name, before, after, want] of cases)
    it(name, () => {
      const got = lines(before, after);
      for (const w of want) assert.ok(got.includes(w), `${w}\nin:\n${got.join("\n")}`);
      if (want.length === 0) assert.deepEqual(got, []);
    });

  it("leaves out what syncward sets itself (the config commit it was read at)", () => {
    const a = { ...envConfig("shop"), configRevision: "1".repeat(40) };
    const b = { ...envConfig("shop"), configRevision: "2".repeat(40) };
    assert.deepEqual(environmentChanges("prod", a, b), []);
  });
});

describe("changeList", () => {
  it("is code spans, at most MAX_LINES of them, then a count", () => {
    const many = pathChanges("x", Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])), {});
    const list = changeList(many).split("\n");
    assert.equal(list.length, MAX_LINES + 1);
    assert.equal(list[0], "- `x.k0: 0 → (unset)`");
    assert.equal(list.at(-1), "- … and 10 more");
  });
});

describe("approversText", () => {
  it("names listed approvers as code, the count and self-approval", () => {
    const env = envConfig("shop", {
      approval: { users: ["carol"], teams: ["acme/sre"], minimum: 2, allowAuthor: true },
    });
    assert.equal(
      approversText(env),
      "`@carol`, `@acme/sre`; 2 approvals needed; authors may approve their own change",
    );
    assert.equal(
      approversText(envConfig("shop", { approval: {} })),
      "anyone with **write** permission; 1 approval needed",
    );
    assert.equal(approversText(envConfig("shop")), "no approval: its syncs wait for nobody");
  });
});
