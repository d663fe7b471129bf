import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COMMAND_NAMES, COMMANDS, parseCommands } from "../../../src/github/commands.ts";
import { helpNext, helpText } from "../../../src/github/help.ts";
import { envConfig } from "../../support/env.ts";

const dev = { ...envConfig("shop-dev"), name: "dev" };
const prod = {
  ...envConfig("shop-prod", {
    approval: { users: ["carol"], teams: ["acme/sre"], minimum: 2 },
    commands: { sync: "maintain" },
  }),
  name: "prod",
};

/** The help table's row of `/name`. */
const row = (text: string, name: string) =>
  text.split("\n").find((l) => l.startsWith(`| \`/${name}\` |`)) ?? "";

describe("helpText", () => {
  it("lists every command of the parser's table, with every flag the parser accepts", () => {
    const text = helpText([dev, prod]);
    for (const name of COMMAND_NAMES) {
      assert.ok(row(text, name), name);
      for (const flag of Object.keys(COMMANDS[name].flags)) {
        assert.match(row(text, name), new RegExp(`\\[--${flag}\\]`), `${name} --${flag}`);
        // What help offers, the parser takes.
        const [parsed] = parseCommands(`/${name} dev --${flag}`, ["dev"]);
        assert.notEqual(parsed?.type, "invalid", `/${name} --${flag}`);
      }
    }
    assert.match(
      row(text, "sync"),
      /`\[env\] \[--prune\] \[--force\] \[--allow-empty\] \[--confirm-prune\]`/,
    );
    assert.match(row(text, "sync"), /`--force`: .* \(needs \*\*admin\*\* permission\)/);
    assert.match(row(text, "freeze"), /`\[env\] \["reason"\]`/);
    assert.match(text, /code blocks, quotes and HTML comments are ignored/);
  });

  it("shows each environment's configured permission, and prod's approvers without mentioning them", () => {
    const text = helpText([dev, prod]);
    assert.match(row(text, "sync"), /\*\*write\*\* on `dev`; \*\*maintain\*\* on `prod` \|$/);
    assert.match(row(text, "diff"), /\*\*read\*\* permission on the repository, or higher \|$/);
    assert.match(
      row(text, "approve"),
      /`dev`: needs no approval; `prod`: `@carol`, `@acme\/sre` \(2 approvals; read permission is enough\); never someone who contributed/,
    );
    assert.doesNotMatch(text, /(^|[^`])@carol/, "help pings nobody");
  });

  it("names the operator's floor on an approver's permission", () => {
    const floored = {
      ...prod,
      floor: { sources: ["project shop"], approverPermission: "maintain" as const },
    };
    assert.match(
      row(helpText([floored]), "approve"),
      /`prod`: `@carol`, `@acme\/sre` \(2 approvals; \*\*maintain\*\* permission at least, by the operator's floor\)/,
    );
  });

  it("says what a command without an environment does, as the handler does it", () => {
    assert.match(
      helpText([dev, prod]),
      /Environments: `dev`, `prod`\. Name one: a command without an environment is answered "Which environment\?" and does not run\./,
    );
    assert.match(
      helpText([dev]),
      /Environments: `dev`\. A command without an environment applies to `dev`, the only one\./,
    );
    assert.doesNotMatch(helpText([dev, prod]), /default environment/);
    assert.match(helpText([]), /No environments are configured in `\.github\/syncward\.yml`/);
  });

  it("every table row has the same number of cells", () => {
    const rows = helpText([dev, prod])
      .split("\n")
      .filter((l) => l.startsWith("|"));
    assert.equal(rows.length, COMMAND_NAMES.length + 2);
    for (const r of rows) assert.equal(r.replaceAll("\\|", "").split("|").length, 6, r);
  });

  it("ends on one Next line", () => {
    assert.equal(helpNext([dev, prod]), "comment `/diff dev` to see what a sync of `dev` would change.");
    assert.match(helpNext([]), /add an environment/);
  });
});
