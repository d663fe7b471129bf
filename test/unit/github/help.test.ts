import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COMMAND_NAMES } from "../../../src/github/commands.ts";
import { helpText } from "../../../src/github/help.ts";

describe("helpText", () => {
  it("lists every command with its arguments and who may run it", () => {
    const text = helpText(["dev", "prod"]);
    for (const name of COMMAND_NAMES) assert.match(text, new RegExp(`^\\| \`/${name}\` \\|`, "m"), name);
    assert.match(text, /\| Command \| Arguments \| What it does \| Who may run it \|/);
    assert.match(text, /\| `\/sync` \| `\[env\] \[--prune\] \[--force\]` \|.*\| people with write access/);
    assert.match(
      text,
      /\| `\/approve` \|.*\*\*Approve\*\*.*read permission is enough.*nobody who contributed to what would be deployed.*unless `allowAuthor`.*not on a fork's pull request; never bots \|/,
    );
    assert.match(text, /\| `\/freeze` \| `\[env\] \["reason"\]` \|/);
    assert.match(text, /Environments: `dev`, `prod`\./);
    assert.match(text, /code blocks, quotes and HTML comments are ignored/);
  });

  it("every table row has the same number of cells", () => {
    const rows = helpText(["dev"])
      .split("\n")
      .filter((l) => l.startsWith("|"));
    assert.equal(rows.length, COMMAND_NAMES.length + 2);
    for (const row of rows) assert.equal(row.replaceAll("\\|", "").split("|").length, 6, row);
  });

  it("puts the prefix first", () => {
    const text = helpText(["dev"], "Unknown command `/snyc`; did you mean `/sync`?");
    assert.ok(text.startsWith("Unknown command `/snyc`; did you mean `/sync`?\n\n#### syncward commands"));
    assert.ok(helpText(["dev"], "  ").startsWith("#### syncward commands"));
  });

  it("says when no environments are configured", () => {
    assert.match(helpText([]), /No environments are configured in `\.github\/syncward\.yml`/);
  });
});
