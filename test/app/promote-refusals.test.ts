// `/promote` refusals answered before anything touches a cluster (the app's cluster is unreachable,
// so any attempt to act would fail the test): an unknown environment, one without promotion, and
// a commenter without the sync permission.
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
    approval: {users: [carol], minimum: 1}
    promotion: {after: staging, healthyFor: 10m, checks: [e2e]}
`;

const app = useOfflineApp();
const comment = (body: string, login = "alice") =>
  issueCommentEvent({ body, sender: { login, type: "User" }, commentId: 1001 });

describe("/promote: refusals", () => {
  it("refuses an environment without promotion, saying why", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "alice", permission: "write" });
    await app().probot.receive(comment("/promote staging"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /^Sorry, `staging has no promotion configured \(promotion\.after in \.github\/syncward\.yml\), so there is no upstream to promote from`\. Nothing was changed\./,
    );
  });

  it("answers an unknown environment with the environments", async () => {
    const reply = mockRefusal(app().mock, CONFIG);
    await app().probot.receive(comment("/promote prdo"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /unknown environment `prdo` \(environments: `staging`, `prod`\)\. Did you mean `\/promote prod`\?/,
    );
  });

  it("needs the sync permission", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "rita", permission: "read" });
    await app().probot.receive(comment("/promote prod", "rita"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /Sorry @rita, `\/promote prod` needs \*\*write\*\* permission on this repository and you have \*\*read\*\*\. Nothing was changed\./,
    );
  });
});
