// Approvers given as teams: every way GitHub can fail to tell membership is answered with its
// cause, not a silent 👀 or a misleading "not a member". The cluster is unreachable: a refused
// approval must not touch it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { mockRefusal, useOfflineApp } from "../support/comment-app.ts";
import { issueCommentEvent } from "../support/webhooks.ts";

const CONFIG = `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: shop-prod}
    production: true
    approval: {users: [carol], teams: [acme/sre], minimum: 1}
`;

const app = useOfflineApp();
const approve = (login: string) =>
  issueCommentEvent({ body: "/approve prod", sender: { login, type: "User" }, commentId: 1001 });

function mockMembership(status: number, body: object = { message: "x" }): void {
  app().mock.api.get("/orgs/acme/teams/sre/memberships/tom").reply(status, body);
}

describe("team approvers", () => {
  it("a 403 from the team API is answered with its cause and the fix", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "tom", permission: "write" });
    mockMembership(403, { message: "Resource not accessible by integration" });
    await app().probot.receive(approve("tom"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /Sorry @tom, you cannot approve \*\*prod\*\*: only @carol, @acme\/sre may approve \(and cannot read team acme\/sre: 403; an owner of acme must accept syncward's "Members: read" permission\)\. Nothing was changed\./,
    );
  });

  it("a misspelled or foreign team is named as such, not as 'not a member'", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "tom", permission: "write" });
    mockMembership(404);
    app().mock.api.get("/orgs/acme/teams/sre").reply(404, { message: "Not Found" });
    await app().probot.receive(approve("tom"));
    app().mock.assertDone();
    assert.match(reply.body(), /team acme\/sre does not exist or syncward cannot see it/);
  });

  it("someone outside an existing team is told who may approve", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "tom", permission: "write" });
    mockMembership(404);
    app().mock.api.get("/orgs/acme/teams/sre").reply(200, { id: 1, slug: "sre", name: "SRE" });
    await app().probot.receive(approve("tom"));
    app().mock.assertDone();
    assert.match(reply.body(), /only @carol, @acme\/sre may approve\. Nothing was changed\./);
  });

  it("any other failure after the 👀 is answered too, with its cause", async () => {
    const reply = mockRefusal(app().mock, CONFIG, { login: "tom", permission: "write" });
    mockMembership(500, { message: "Server Error" });
    await app().probot.receive(approve("tom"));
    app().mock.assertDone();
    assert.match(
      reply.body(),
      /^`\/approve` did not run to the end: GitHub did not answer when syncward asked for team acme\/sre \(GitHub said `Server Error`, 500\): an outage on GitHub's side\. Nothing was changed\./,
    );
    assert.match(reply.body(), /\n\*\*Next:\*\* comment the command again in a few minutes/);
  });
});
