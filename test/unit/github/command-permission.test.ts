// The permission a comment command needs in effect: `commands` as configured, and /rollback's floor
// (at least the approve permission where an approval rule gates the environment).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyFloors } from "../../../src/config/floors.ts";
import type { EnvironmentConfig } from "../../../src/config/types.ts";
import { type CommandPermissionKey, commandPermission } from "../../../src/github/command-permission.ts";
import { helpText } from "../../../src/github/help.ts";
import { envConfig } from "../../support/env.ts";

const gate = { users: [], teams: [], minimum: 1, allowAuthor: false, trustedBots: [] };
const env = (commands: Partial<EnvironmentConfig["commands"]>, gated: boolean) =>
  envConfig("shop", { commands, ...(gated ? { approval: gate } : {}) });

describe("the permission a command needs", () => {
  const rows: Array<[string, EnvironmentConfig, CommandPermissionKey, string]> = [
    ["rollback by default: write, as sync", env({}, false), "rollback", "write"],
    [
      "rollback lowered where nothing gates it: as configured",
      env({ rollback: "triage" }, false),
      "rollback",
      "triage",
    ],
    ["rollback raised: as configured", env({ rollback: "admin" }, false), "rollback", "admin"],
    [
      "gated: at least the approve permission",
      env({ rollback: "write", approve: "maintain" }, true),
      "rollback",
      "maintain",
    ],
    [
      "gated: a repository cannot lower it below the floor",
      env({ rollback: "read", approve: "write" }, true),
      "rollback",
      "write",
    ],
    [
      "gated: a repository can raise it above the floor",
      env({ rollback: "admin", approve: "write" }, true),
      "rollback",
      "admin",
    ],
    [
      "not gated: the approve permission does not count",
      env({ rollback: "write", approve: "admin" }, false),
      "rollback",
      "write",
    ],
    [
      "other commands: as configured, gated or not",
      env({ sync: "read", approve: "admin" }, true),
      "sync",
      "read",
    ],
    ["freeze as configured", env({ freeze: "maintain" }, true), "freeze", "maintain"],
  ];
  for (const [name, e, key, want] of rows) it(name, () => assert.equal(commandPermission(e, key), want));

  it("an operator's production floor raises approve, and rollback with it", () => {
    const floored = applyFloors(
      env({ rollback: "write", approve: "write" }, false),
      [{ source: "project shop", minProductionApprovals: 1, approverPermission: "maintain" }],
      true,
    );
    assert.equal(commandPermission(floored, "rollback"), "maintain");
  });

  it("help says the permission in effect", () => {
    const prod = { ...env({ rollback: "read", approve: "maintain" }, true), name: "prod" };
    const row = helpText([prod])
      .split("\n")
      .find((l) => l.startsWith("| `/rollback` |"));
    assert.match(row ?? "", /`\[env\] \[history id or commit\]`/);
    assert.match(row ?? "", /\*\*maintain\*\* permission on the repository, or higher \|$/);
  });
});
