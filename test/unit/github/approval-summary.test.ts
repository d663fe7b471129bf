// What approvers are shown (the waiting check run) and who is notified (the PR comment): the
// configured approvers are the only live mentions; everything people wrote stays inert.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approverMentions } from "../../../src/github/authorize.ts";
import { checkActions } from "../../../src/github/reporter.ts";
import { checkRunOutput, prCommentBody } from "../../../src/github/summary.ts";
import { envConfig, OLD_SHA, SHA, stateOf } from "../../support/summary-fixtures.ts";

const env = envConfig({
  approval: {
    users: ["carol", "alice"],
    teams: ["acme/sre"],
    minimum: 2,
    allowAuthor: false,
    trustedBots: [],
  },
});

function waiting(range: Parameters<typeof checkRunOutput>[0]["awaitingApproval"]) {
  return checkRunOutput({
    env,
    state: stateOf({
      syncStatus: "OutOfSync",
      pendingApprovals: [{ sha: SHA, by: "carol", id: 3, at: "2024-05-01T12:00:00Z" }],
    }),
    repoBranch: "main",
    effectivePolicy: "Automated",
    awaitingApproval: range,
  });
}

describe("the waiting check run", () => {
  it("lists the range, who is still needed and who cannot approve", () => {
    const out = waiting({
      revision: SHA,
      range: {
        base: OLD_SHA,
        commits: [
          { sha: OLD_SHA.replace(/^./, "f"), title: "prod: bump image", author: "alice" },
          { sha: SHA, title: "docs", author: "bob" },
        ],
        pulls: [{ number: 12, title: "Bump image", author: "alice" }],
        unclaimed: ["ghost@example.com"],
      },
      excluded: ["alice"],
    });
    assert.match(out.summary, /\(1 so far: @carol; \*\*1 more\*\* needed\)/);
    // carol approved already and alice contributed: neither is asked.
    assert.match(out.summary, /Approvers: @acme\/sre\./);
    assert.match(out.summary, /Cannot approve it, having contributed to it: `alice`\./);
    assert.match(out.summary, /#### What would be deployed \(2 commits since `[0-9a-f]{7}`\)/);
    assert.match(out.summary, /\| `a1b2c3d` \| `bob` \| docs \|/);
    assert.match(out.summary, /Pull requests: #12 Bump image by `alice`\./);
    assert.match(out.summary, /no GitHub account claims: `ghost@example.com`/);
  });

  it("counts what the gate counts: lapsed approvals left out, the stricter rule's minimum, and why it waits", () => {
    // carol's approval in state lapsed (approval.expiresAfter); a config change holds prod to 3.
    const out = waiting({
      revision: SHA,
      gate: {
        approvers: [],
        needed: 3,
        reason: "waiting for approval (0/3); 1 approval(s) expired after 24h",
      },
    });
    assert.match(out.summary, /needs 3 approvals .*\(0 so far; \*\*3 more\*\* needed\)/);
    assert.match(out.summary, /Held: waiting for approval \(0\/3\); 1 approval\(s\) expired after 24h\./);
    assert.doesNotMatch(out.summary, /@carol;/);
  });

  it("shows commit and pull-request titles inert: no mention, no HTML, no table break", () => {
    const out = waiting({
      revision: SHA,
      range: {
        commits: [{ sha: SHA, title: "hi @acme/sre <img src=x> | `x`", author: "mallory" }],
        pulls: [{ number: 3, title: "@everyone <b>urgent</b>", author: "mallory" }],
      },
    });
    const section = out.summary.slice(out.summary.indexOf("#### What would be deployed"));
    assert.doesNotMatch(section.replace(/`[^`]*`/g, ""), /@acme|@everyone|<img|<b>/);
    assert.match(section, /hi `@acme\/sre` &lt;img src=x&gt; \\\| \\`x\\`/);
  });

  it("says so when the range could not be read", () => {
    const out = waiting({ revision: SHA, rangeError: "compare: 404" });
    assert.match(out.summary, /_What would be deployed could not be read: compare: 404\._/);
  });

  it("offers Approve only while a commit waits for approval", () => {
    assert.deepEqual(
      checkActions(false, true).map((a) => a.identifier),
      ["sync", "freeze", "approve"],
    );
    assert.deepEqual(
      checkActions(true).map((a) => a.identifier),
      ["sync", "unfreeze"],
    );
    for (const a of checkActions(true, true)) {
      assert.ok(a.label.length <= 20 && a.description.length <= 40 && a.identifier.length <= 20, a.label);
    }
  });
});

describe("the PR summary comment's approvers", () => {
  it("mentions the configured approvers, and only them", () => {
    const mentions = approverMentions("acme", {
      users: ["carol"],
      teams: ["acme/sre", "platform"],
      minimum: 1,
      allowAuthor: false,
      trustedBots: [],
    });
    assert.deepEqual(mentions, ["@carol", "@acme/sre", "@acme/platform"]);
    const body = prCommentBody(
      [
        {
          env: "prod",
          status: "waiting for approval",
          revision: SHA,
          note: "ask @mallory <b>now</b>",
          approvers: mentions,
        },
      ],
      "m",
    );
    const row = body.split("\n").find((l) => l.startsWith("| `prod`")) ?? "";
    assert.equal(
      row,
      "| `prod` | waiting for approval | `a1b2c3d` |  | ask `@mallory` &lt;b&gt;now&lt;/b&gt; approvers: @carol @acme/sre @acme/platform |",
    );
  });

  it("drops anything in the approvers that is not exactly a mention", () => {
    const body = prCommentBody(
      [
        {
          env: "prod",
          status: "waiting",
          revision: SHA,
          approvers: ["@carol", "@evil <img src=x>", "@a|b", "carol", "@acme/sre\n@x", "@-bad"],
        },
      ],
      "m",
    );
    const row = body.split("\n").find((l) => l.startsWith("| `prod`")) ?? "";
    assert.match(row, / \| approvers: @carol \|$/);
    assert.equal(
      approverMentions("acme", {
        users: ["ok", "not ok"],
        teams: ["acme/x y"],
        minimum: 1,
        allowAuthor: false,
        trustedBots: [],
      }).join(" "),
      "@ok",
    );
  });
});
