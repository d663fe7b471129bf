// Hostile PR comments: injection strings, lookalike characters, many commands, huge lines, bots.
// The app runs with an unreachable cluster, so anything that tried to act would fail the test; the
// strict GitHub mock fails it on any request not expected (a permission lookup included).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig } from "../../src/config/load.ts";
import { helpText } from "../../src/github/help.ts";
import { mockConfig } from "../support/app.ts";
import { mockRefusal, useOfflineApp } from "../support/comment-app.ts";
import { checkRunEvent, issueCommentEvent } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: dev
    source: {path: overlays/dev}
    destination: {namespace: shop-dev}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
`;

const app = useOfflineApp();
const HELP = helpText(parseConfig(CONFIG).environments);

function comment(body: string, login = "alice", type: "User" | "Bot" = "User") {
  return issueCommentEvent({ body, sender: { login, type }, commentId: 1001 });
}

/** The reply to `body`, which must be refused before anyone's permission is even looked up. */
async function refusal(body: string): Promise<string> {
  const reply = mockRefusal(app().mock, CONFIG);
  await app().probot.receive(comment(body));
  app().mock.assertDone();
  return reply.body();
}

/** A comment that is no command: the config is read (to know the environments), and that is all. */
async function ignored(body: string): Promise<void> {
  mockConfig(app().mock, CONFIG);
  await app().probot.receive(comment(body));
  app().mock.assertDone();
  assert.deepEqual(
    app().mock.requests.map((r) => r.method),
    ["GET"],
  );
}

/** Markdown without its code spans and fences: what GitHub renders as markdown, HTML and mentions. */
function rendered(markdown: string): string {
  let out = markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?\n\1\s*$/gm, "");
  for (;;) {
    const open = /`+/.exec(out);
    if (!open) return out;
    const close = out.indexOf(open[0], open.index + open[0].length);
    if (close < 0) return out;
    let end = close;
    while (out[end + open[0].length] === "`") end = out.indexOf(open[0], end + 1);
    out = out.slice(0, open.index) + out.slice(end + open[0].length);
  }
}

describe("hostile comments: injection strings are refused and quoted inertly", () => {
  it("ignores `/sync; rm -rf /`: not a command at all, so nothing but the config is read", async () => {
    await ignored("/sync; rm -rf /");
  });

  const marker = join(mkdtempSync(join(tmpdir(), "syncward-pwned-")), "pwned");
  for (const body of [
    "/sync dev; rm -rf /",
    `/sync $(touch ${marker})`,
    `/sync \`touch ${marker}\``,
    `/diff dev && touch ${marker}`,
  ]) {
    it(`refuses ${JSON.stringify(body)}: nothing runs, nothing is executed`, async () => {
      const reply = await refusal(body);
      assert.match(reply, /unknown (environment|flag)|takes at most one environment/);
      assert.equal(existsSync(marker), false, "no shell ever saw the comment");
    });
  }

  it("quotes markdown, HTML and mentions in code spans that they cannot close", async () => {
    const body = "/sync ``dev`<img src=x onerror=alert(1)>`` @acme/everyone [x](https://evil.example)";
    const reply = await refusal(body);
    const outside = rendered(reply);
    for (const bad of ["<img", "@acme/everyone", "](https://evil.example)", "onerror"]) {
      assert.ok(!outside.includes(bad), `${bad} would render outside a code span:\n${outside}`);
    }
    assert.ok(reply.includes("<img src=x onerror=alert(1)>"), "shown, as code");
  });
});

describe("hostile comments: lookalike and invisible characters", () => {
  const lookalikes: Array<[string, string]> = [
    ["a fullwidth slash", "\uff0fsync dev"],
    ["a Cyrillic letter in the command", "/\u0455ync dev"],
    ["a zero-width joiner in the command", "/sy\u200dnc dev"],
    ["a zero-width space after the command", "/sync\u200b dev"],
  ];
  for (const [what, body] of lookalikes) {
    it(`ignores ${what}: not a command, no reaction, no reply`, async () => {
      await ignored(body);
    });
  }

  it("refuses a Cyrillic lookalike of an environment name, suggesting the real one", async () => {
    const reply = await refusal("/sync d\u0435v");
    assert.match(reply, /unknown environment `d\u0435v`.*Did you mean `\/sync dev`\?/s);
  });

  it("refuses a right-to-left override and shows it written out, never raw", async () => {
    const reply = await refusal("/sync \u202eved");
    assert.match(reply, /invisible or direction-changing characters \(\\u\{202e\}\)/);
    assert.ok(!reply.includes("\u202e"), "the override never reaches the reply");
  });

  it("refuses a zero-width joiner inside an environment name", async () => {
    const reply = await refusal("/sync de\u200dv");
    assert.match(reply, /\\u\{200d\}/);
    assert.ok(!reply.includes("\u200d"));
  });
});

describe("hostile comments: many commands and huge lines", () => {
  it("runs none of a comment's commands when one of them is invalid", async () => {
    // `/freeze dev` alone would reach the (unreachable) cluster; it must not even be tried.
    const reply = await refusal("/freeze dev\n/snyc prod");
    assert.match(reply, /unknown command `\/snyc`/);
    assert.match(reply, /Nothing in this comment was run/);
  });

  it("refuses more than 10 commands in one comment", async () => {
    const reply = await refusal(Array.from({ length: 11 }, () => "/help").join("\n"));
    assert.match(reply, /11 commands in one comment; at most 10 are read, so none of them ran/);
  });

  it("refuses a 100,000-character line without echoing it back", async () => {
    const reply = await refusal(`/sync dev ${"A".repeat(100_000)}`);
    assert.match(reply, /the command line is 100010 characters long; at most 500 are read/);
    assert.ok(!reply.includes("A".repeat(200)), "the huge line is not echoed");
    assert.ok(reply.length < 1000, `reply of ${reply.length} chars`);
  });

  it("refuses a /freeze reason longer than 200 characters (it would live in state and check runs)", async () => {
    const reply = await refusal(`/freeze dev "${"x".repeat(201)}"`);
    assert.match(reply, /the reason is 201 characters long; at most 200 are kept/);
  });
});

describe("hostile comments: who is speaking", () => {
  it("ignores our own app's replies (sender type Bot), even though they list every command", async () => {
    await app().probot.receive(comment(`${HELP}\n/sync dev`, "syncward[bot]", "Bot"));
    app().mock.assertDone();
    assert.equal(app().mock.requests.length, 0, "no loop: the bot never answers itself");
  });

  it("ignores a check-run button clicked by a bot (our own app included): no loop", async () => {
    const click = checkRunEvent("requested_action", {
      identifier: "sync",
      name: "syncward / dev",
      sender: { login: "syncward[bot]", type: "Bot" },
    });
    await app().probot.receive(click);
    app().mock.assertDone();
    assert.equal(app().mock.requests.length, 0);
  });

  it("ignores a bot whose comment user is a Bot even if the sender looks human", async () => {
    const event = comment("/sync dev", "renovate[bot]", "User");
    (event.payload.comment.user as { type: string }).type = "Bot";
    await app().probot.receive(event);
    app().mock.assertDone();
    assert.equal(app().mock.requests.length, 0);
  });

  it("refuses the author of a pull request from a fork who has no access to this repository", async () => {
    // A fork's author is not a collaborator of the base repository: GitHub answers 404.
    const reply = mockRefusal(app().mock, CONFIG, { login: "forker", permission: "none" });
    const event = comment("/sync dev --prune", "forker");
    (event.payload.issue.user as { login: string }).login = "forker";
    await app().probot.receive(event);
    app().mock.assertDone();
    assert.match(reply.body(), /Sorry @forker, `\/sync dev` needs \*\*write\*\* permission .* \*\*none\*\*/);
  });

  it("refuses /sync --force from a writer: it needs admin", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "walt", permission: "write" });
    await app().probot.receive(comment("/sync dev --force", "walt"));
    app().mock.assertDone();
    assert.match(reply.body(), /`\/sync dev --force` needs \*\*admin\*\* permission/);
  });
});
