// PR comment commands that must be refused (or ignored) before anything touches a cluster:
// the app runs with an unreachable cluster, so any attempt to act would fail the test.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockConfig, mockPermission, mockReactions, mockReply } from "../support/app.ts";
import { mockRefusal, useOfflineApp } from "../support/comment-app.ts";
import { issueCommentEvent } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: dev
    source: {path: overlays/dev}
    destination: {namespace: shop-dev}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    approval: {users: [carol, bob], minimum: 1}
`;

const app = useOfflineApp();

function comment(
  body: string,
  login = "alice",
  extra: Partial<{ type: "User" | "Bot"; author: string; commentId: number; deliveryId: string }> = {},
) {
  const event = issueCommentEvent({
    body,
    sender: { login, type: extra.type ?? "User" },
    commentId: extra.commentId ?? 1001,
    deliveryId: extra.deliveryId,
    author: extra.author,
  });
  return event;
}

describe("PR comment commands: refusals", () => {
  it("politely refuses a read-only user and changes nothing", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "rita", permission: "read" });
    await app().probot.receive(comment("/sync dev", "rita"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /Sorry @rita, `\/sync dev` needs \*\*write\*\* permission on this repository and you have \*\*read\*\*\. Nothing was changed\./,
    );
  });

  it("refuses an outside collaborator (no permission at all)", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "mallory", permission: "none" });
    await app().probot.receive(comment("/freeze dev because", "mallory"));
    app().mock.assertDone();
    assert.match(reply.body(), /needs \*\*write\*\* permission .* you have \*\*none\*\*/);
  });

  it("ignores bots entirely, including their commands", async () => {
    await app().probot.receive(comment("/sync dev", "renovate[bot]", { type: "Bot" }));
    app().mock.assertDone();
    assert.equal(app().mock.requests.length, 0);
  });

  it("refuses a self-approval by the pull request's author", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "bob", permission: "write" });
    await app().probot.receive(comment("/approve prod", "bob", { author: "bob" }));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /Sorry @bob, you cannot approve \*\*prod\*\*: you opened #7, and nobody who contributed to a change approves its deployment \(approval\.allowAuthor is false\)\. Nothing was changed\./,
    );
  });

  it("refuses an approver who is not in the approval rule", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "dave", permission: "admin" });
    await app().probot.receive(comment("/approve prod", "dave", { author: "bob" }));
    app().mock.assertDone();
    assert.match(reply.body(), /you cannot approve \*\*prod\*\*: only @carol, @bob may approve/);
  });

  it("answers an unknown environment with did-you-mean, the environments, and no help table", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment("/sync prdo"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /unknown environment `prdo` \(environments: `dev`, `prod`\)\. Did you mean `\/sync prod`\?/,
    );
    assert.doesNotMatch(reply.body(), /\| Command \|/);
    assert.match(reply.body(), /\n\n\*\*Next:\*\* comment `\/sync prod`, or `\/help` for every command\.$/);
  });

  it("answers a one-word typo with a short did-you-mean, not the whole help", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment("/aprove"));
    app().mock.assertDone();
    assert.equal(
      reply.body(),
      "`/aprove`: unknown command `/aprove`. Did you mean `/approve`?\n\nNothing was run.\n\n**Next:** comment `/approve`, or `/help` for every command.",
    );
  });

  it("answers a malformed command (unterminated quote) without acting", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment('/freeze dev "release night'));
    app().mock.assertDone();
    assert.match(reply.body(), /quote/i);
  });

  it("asks which environment when several exist and none is named", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "alice", permission: "write" });
    await app().probot.receive(comment("/sync"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /^Which environment\? This repository has 2: `dev`, `prod`; a command without one does not run\./,
    );
    assert.match(reply.body(), /\*\*Next:\*\* comment `\/sync dev` \(or another environment's name\)\.$/);
  });

  it("answers /help to anyone, and ignores comments without commands", async () => {
    mockConfig(app().mock, CONFIG);
    mockReactions(app().mock, 1001, "rocket");
    mockPermission(app().mock, "visitor", "none");
    const reply = mockReply(app().mock, 7);
    await app().probot.receive(comment("thanks!\n/help", "visitor"));
    app().mock.assertDone();
    assert.match(reply.body(), /\| `\/sync` \|/);
    assert.match(
      reply.body(),
      /Name one: a command without an environment is answered "Which environment\?" and does not run\./,
    );
    assert.doesNotMatch(reply.body(), /default environment/);
    assert.match(reply.body(), /`prod`: `@carol`, `@bob` \(1 approval; read permission is enough\)/);
    assert.match(
      reply.body(),
      /\n\*\*Next:\*\* comment `\/diff dev` to see what a sync of `dev` would change\.$/,
    );
    await app().probot.receive(comment("LGTM, see /usr/share/doc", "visitor", { commentId: 1002 }));
    app().mock.assertDone();
  });

  it("ignores a redelivery of the same webhook (same X-GitHub-Delivery)", async () => {
    mockConfig(app().mock, CONFIG);
    mockReactions(app().mock, 1001, "confused");
    mockPermission(app().mock, "rita", "read");
    mockReply(app().mock, 7);
    await app().probot.receive(comment("/sync dev", "rita", { deliveryId: "delivery-1" }));
    await app().probot.receive(comment("/sync dev", "rita", { deliveryId: "delivery-1" }));
    app().mock.assertDone();
  });
});
