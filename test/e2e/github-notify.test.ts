// An environment's outbound webhook through the GitHub App on the real cluster: a push that syncs
// tells the receiver (on 127.0.0.1) that the sync started and that it succeeded, as signed
// CloudEvents.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { signatureOf } from "../../src/notify/notifier.ts";
import { startApp, type TestApp } from "../support/app.ts";
import { useCluster } from "../support/cluster.ts";
import { makeRepo } from "../support/git-repo.ts";
import { answerEverything } from "../support/permissive-github.ts";
import { pushEvent } from "../support/webhooks.ts";

const cluster = useCluster();

describe("outbound notifications", () => {
  let app: TestApp;
  const received: Array<{ body: string; signature?: string }> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ body, signature: req.headers["x-syncward-signature-256"] as string | undefined });
      res.writeHead(202).end();
    });
  });

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    process.env.SYNCWARD_NOTIFY_HOSTS = "127.0.0.1";
    process.env.SYNCWARD_NOTIFY_E2E_KEY = "e2e-key";
    const ns = await cluster.namespace("notify");
    const stateNs = await cluster.stateNamespace("notify-state");
    const repo = makeRepo({
      "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: '1'}\n",
    });
    const config = `environments:
  - name: dev
    source: {path: app}
    destination: {namespace: ${ns}}
    syncPolicy: {automated: {prune: true}}
    notify:
      - {url: "http://127.0.0.1:${port}/hook", secretEnv: SYNCWARD_NOTIFY_E2E_KEY}
`;
    app = await startApp({ client: cluster.syncwardClient, stateNamespace: stateNs });
    answerEverything(app.mock, config, repo.dir);
    await app.probot.receive(
      pushEvent({ after: repo.head(), before: "0".repeat(40), modified: ["app/cm.yaml"] }),
    );
    await app.settle();
    await Promise.all(app.parts.runtimes.all().map((r) => r.notifier.idle()));
  });

  after(async () => {
    await Promise.all(app.parts.runtimes.all().map((r) => r.stop()));
    app.mock.reset();
    server.close();
    delete process.env.SYNCWARD_NOTIFY_HOSTS;
    delete process.env.SYNCWARD_NOTIFY_E2E_KEY;
  });

  it("a push that syncs sends 'started' then 'succeeded', each signed", () => {
    const events = received.map((r) => JSON.parse(r.body) as { type: string; data: { environment: string } });
    // Deliveries do not wait for each other, so they may arrive in either order.
    assert.deepEqual(events.map((e) => e.type).sort(), [
      "dev.syncward.sync.started",
      "dev.syncward.sync.succeeded",
    ]);
    assert.ok(events.every((e) => e.data.environment === "dev"));
    for (const r of received) assert.equal(r.signature, signatureOf(r.body, "e2e-key"));
  });
});
