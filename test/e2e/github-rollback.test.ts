// `/rollback` against the real state store: an argument that names no entry of the environment's
// history gets a reply saying so, and nothing is pinned.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  mockConfig,
  mockPermission,
  mockReactions,
  mockReply,
  startApp,
  type TestApp,
} from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { issueCommentEvent } from "../support/webhooks.ts";

const cluster = useCluster();

describe("/rollback on the real state store", () => {
  let app: TestApp;
  let stateNs: string;

  before(async () => {
    const ns = await cluster.namespace("ghrb");
    stateNs = await cluster.stateNamespace("ghrb-state");
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    mockConfig(
      app.mock,
      `environments:\n  - name: dev\n    source: {path: app}\n    destination: {namespace: ${ns}}\n`,
    );
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
  });

  for (const [argument, said] of [
    [
      "9",
      /^Sorry, ``dev has no history entry 9 \(`syncward app history dev` lists them\)``\. Nothing was changed\./,
    ],
    ["deadbee", /^Sorry, ``dev has no successful sync of commit deadbee in its history/],
  ] as const)
    it(`an unknown ${argument.length < 7 ? "history id" : "commit"} is answered, and nothing is pinned`, async () => {
      mockPermission(app.mock, "alice", "write");
      mockReactions(app.mock, 1001, "confused");
      const reply = mockReply(app.mock, 7);
      await app.probot.receive(
        issueCommentEvent({
          body: `/rollback dev ${argument}`,
          sender: { login: "alice", type: "User" },
          commentId: 1001,
        }),
      );
      await app.settle();
      app.mock.assertDone();
      assert.match(reply.body(), said);
      assert.match(
        reply.body(),
        /\*\*Next:\*\* `\/history dev` lists the history ids and commits dev ran; comment `\/rollback dev <id>` with one of them\.$/,
      );
      const rt = app.parts.runtimes.all()[0];
      const controller = rt?.reconciler.controller("dev");
      assert.ok(rt && controller);
      assert.equal((await rt.reconciler.store.load(controller.instance)).pin, undefined);
    });
});
