// Floors the repository cannot lower, on GitHub: under the operator's floor (the installation's
// SYNCWARD_MIN_PRODUCTION_APPROVALS, or a project's production destination), a repository's
// `commands: {approve: read}`, `allowAuthor: true` or `production: false` does not let a reader
// approve. The cluster is unreachable: a refused approval must not touch it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { REPO_PATH, startApp, unreachableClient } from "../support/app.ts";
import { mockRefusal } from "../support/comment-app.ts";
import { issueCommentEvent } from "../support/webhooks.ts";

const config = (production: boolean) => `environments:
  - name: prod
    source: {path: prod}
    destination: {namespace: shop-prod}
    production: ${production}
    commands: {approve: read}
    approval: {users: [carol], minimum: 1, allowAuthor: true}
`;
const approve = () =>
  issueCommentEvent({ body: "/approve prod", sender: { login: "carol", type: "User" }, commentId: 1001 });

describe("approval under an operator floor", () => {
  describe("the installation's floor", () => {
    before(() => {
      process.env.SYNCWARD_MIN_PRODUCTION_APPROVALS = "1";
    });
    after(() => {
      delete process.env.SYNCWARD_MIN_PRODUCTION_APPROVALS;
    });

    it("commands.approve: read and allowAuthor: true do not let a listed reader approve", async () => {
      const app = await startApp({ client: unreachableClient() });
      try {
        const reply = mockRefusal(app.mock, config(true), { login: "carol", permission: "read" });
        await app.probot.receive(approve());
        app.mock.assertDone();
        assert.match(
          reply.body(),
          /Sorry @carol, you cannot approve \*\*prod\*\*: approving prod needs \*\*write\*\* permission on this repository under the operator's floor \(SYNCWARD_MIN_PRODUCTION_APPROVALS\), whatever the repository's approval or commands settings say, and you have \*\*read\*\*\. Nothing was changed\./,
        );
      } finally {
        await app.parts.runtimes.stop();
        app.mock.reset();
      }
    });
  });

  it("production: false on a destination the operator marks production is still gated", async () => {
    const projects = stringify({
      projects: [
        {
          name: "shop",
          properties: { team: "shop" },
          destinations: [{ namespace: "shop-prod", production: true }],
          floors: { productionApprovals: 2, approverPermission: "maintain" },
        },
      ],
    });
    const app = await startApp({ client: unreachableClient(), projects });
    try {
      app.mock.api
        .get("/orgs/acme/properties/schema/team")
        .reply(200, { property_name: "team", value_type: "string", values_editable_by: "org_actors" });
      app.mock.api
        .get(`${REPO_PATH}/properties/values`)
        .reply(200, [{ property_name: "team", value: "shop" }]);
      const reply = mockRefusal(app.mock, config(false), { login: "carol", permission: "write" });
      await app.probot.receive(approve());
      app.mock.assertDone();
      assert.match(
        reply.body(),
        /approving prod needs \*\*maintain\*\* permission on this repository under the operator's floor \(project shop\)/,
      );
    } finally {
      await app.parts.runtimes.stop();
      app.mock.reset();
    }
  });
});
