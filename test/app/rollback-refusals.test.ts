// `/rollback` and `/unpin` refusals answered before anything touches a cluster (the app's cluster
// is unreachable, so any attempt to act would fail the test): a commenter without the rollback
// permission, a writer below the approve permission on a gated environment (the floor), an
// unknown environment and an argument that names no history entry or commit.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mockRefusal, useOfflineApp } from "../support/comment-app.ts";
import { issueCommentEvent } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: staging
    source: {path: overlays/staging}
    destination: {namespace: shop-staging}
    syncPolicy: {automated: {prune: true, selfHeal: true}}
  - name: prod
    source: {path: overlays/prod}
    destination: {namespace: shop-prod}
    approval: {minimum: 1}
    commands: {approve: maintain, rollback: read}
`;

const app = useOfflineApp();
const comment = (body: string, login = "alice") =>
  issueCommentEvent({ body, sender: { login, type: "User" }, commentId: 1001 });

describe("/rollback and /unpin: refusals", () => {
  it("needs the rollback permission (write by default): a reader is refused and nothing changes", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "rita", permission: "read" });
    await app().probot.receive(comment("/rollback staging 3", "rita"));
    app().mock.assertDone();
    assert.equal(
      reply.body(),
      "Sorry @rita, `/rollback staging` needs **write** permission on this repository and you have **read**. Nothing was changed.\n\n**Next:** ask someone with **write** permission to comment `/rollback staging`.",
    );
  });

  it("/unpin needs the same permission", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "rita", permission: "triage" });
    await app().probot.receive(comment("/unpin staging", "rita"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /^Sorry @rita, `\/unpin staging` needs \*\*write\*\* permission on this repository and you have \*\*triage\*\*\. Nothing was changed\./,
    );
  });

  it("a gated environment: a writer below the approve permission is refused, whatever commands.rollback says", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "walt", permission: "write" });
    await app().probot.receive(comment("/rollback prod", "walt"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /^Sorry @walt, `\/rollback prod` needs \*\*maintain\*\* permission on this repository and you have \*\*write\*\*\. Nothing was changed\./,
    );
  });

  it("answers an unknown environment with the environments", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment("/rollback prdo 3"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /unknown environment `prdo` \(environments: `staging`, `prod`\)\. Did you mean `\/rollback prod 3`\?/,
    );
    assert.match(reply.body(), /Nothing was run\./);
  });

  it("answers an argument that is neither a history id nor a commit", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment("/rollback staging yesterday"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /`yesterday` is neither a history id \(a whole number\) nor a commit \(7 to 40 hex digits\)\.\n\nNothing was run\./,
    );
  });
});
