// Outbound webhooks: which events become which CloudEvents, who may be sent one, and delivery to a
// real receiver on 127.0.0.1 that fails twice before it accepts.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import pino from "pino";
import { ConfigError } from "../../../src/config/load.ts";
import {
  cloudEventOf,
  hostAllowed,
  Notifier,
  notifyEventOf,
  signatureOf,
} from "../../../src/notify/notifier.ts";
import type { ReconcilerEvent } from "../../../src/reconciler/events.ts";
import { envConfig } from "../../support/env.ts";

const REV = "a".repeat(40);
const base = { instance: "acme-shop.prod", env: "prod", revision: REV } as const;
const outcome = (phase: "Succeeded" | "Failed") => ({
  revision: REV,
  phase,
  message: phase === "Succeeded" ? "1 created" : "1 failed",
  resources: [],
  startedAt: "",
  finishedAt: "",
  totals: { created: 1, configured: 0, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
  writes: 1,
  dryRun: false,
  inventory: [],
  retryable: false,
});
const entry = {
  id: 1,
  startedAt: "",
  finishedAt: "",
  revision: REV,
  trigger: "push" as const,
  actor: "alice",
  result: "Succeeded" as const,
  message: "",
  counts: { created: 1, configured: 0, pruned: 0, failed: 0 },
};
const started: ReconcilerEvent = {
  ...base,
  type: "syncStarted",
  trigger: "push",
  actor: "alice",
  changes: 3,
};
const succeeded: ReconcilerEvent = {
  ...base,
  type: "synced",
  trigger: "push",
  actor: "alice",
  outcome: outcome("Succeeded"),
  entry,
};

describe("notifyEventOf", () => {
  const cases: Array<[string, ReconcilerEvent, string | undefined]> = [
    ["a sync starting", started, "sync-started"],
    ["a sync that succeeded", succeeded, "sync-succeeded"],
    ["a sync that failed", { ...succeeded, outcome: outcome("Failed") } as ReconcilerEvent, "sync-failed"],
    [
      "waiting for approval",
      { ...base, type: "awaitingApproval", trigger: "push", actor: "alice", approvals: [], needed: 1 },
      "awaiting-approval",
    ],
    [
      "an automatic rollback",
      { ...base, type: "autoRollback", to: "a".repeat(40), refused: undefined },
      "auto-rollback",
    ],
    ["anything else", { ...base, type: "stuck", reason: "x" }, undefined],
  ];
  for (const [name, event, expected] of cases) it(name, () => assert.equal(notifyEventOf(event), expected));
});

describe("cloudEventOf", () => {
  it("is a CloudEvents 1.0 structured event naming the app, environment and revision", () => {
    const ce = cloudEventOf(succeeded, "sync-succeeded", new Date("2026-12-01T00:00:00Z"));
    assert.equal(ce.specversion, "1.0");
    assert.equal(ce.type, "dev.syncward.sync.succeeded");
    assert.equal(ce.source, "syncward/acme-shop.prod");
    assert.equal(ce.subject, REV);
    assert.equal(ce.time, "2026-12-01T00:00:00.000Z");
    assert.deepEqual(
      { app: ce.data.app, environment: ce.data.environment, phase: ce.data.phase, actor: ce.data.actor },
      { app: "acme-shop", environment: "prod", phase: "Succeeded", actor: "alice" },
    );
  });
});

describe("cloudEventOf an automatic rollback", () => {
  it("carries the release it went back to and why, or why it did not", () => {
    const note = { from: REV, reason: "stayed Degraded for 5m", evidence: [] };
    const done = cloudEventOf(
      { ...base, type: "autoRollback", to: "a".repeat(40), note, outcome: outcome("Succeeded") },
      "auto-rollback",
    );
    assert.equal(done.type, "dev.syncward.auto.rollback");
    assert.deepEqual(
      { to: done.data.to, reason: done.data.reason, phase: done.data.phase, refused: done.data.refused },
      { to: "a".repeat(40), reason: "stayed Degraded for 5m", phase: "Succeeded", refused: undefined },
    );
    const refused = cloudEventOf(
      { ...base, type: "autoRollback", refused: "a CRD changed" },
      "auto-rollback",
    );
    assert.equal(refused.data.refused, "a CRD changed");
  });
});

describe("hostAllowed (SYNCWARD_NOTIFY_HOSTS)", () => {
  const cases: Array<[string, string[], boolean]> = [
    ["https://hooks.example.com/x", ["hooks.example.com"], true],
    ["https://a.hooks.example.com/x", ["*.example.com"], true],
    ["https://example.com.evil.net/x", ["*.example.com"], false],
    ["http://169.254.169.254/latest/meta-data", ["hooks.example.com"], false],
    ["https://hooks.example.com/x", [], false],
  ];
  for (const [url, allowed, expected] of cases)
    it(`${url} with [${allowed.join(", ")}]: ${expected ? "sent" : "refused"}`, () =>
      assert.equal(hostAllowed(url, allowed), expected));
});

describe("notify in the config", () => {
  it("a key must come from a SYNCWARD_NOTIFY_ variable, and events are named", () => {
    assert.throws(
      () =>
        envConfig("shop", { notify: [{ url: "https://h.example.com", secretEnv: "GITHUB_PRIVATE_KEY" }] }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /notify\[0\]\.secretEnv: must name an environment variable of syncward's that starts with SYNCWARD_NOTIFY_/.test(
          err.message,
        ),
    );
    assert.throws(
      () => envConfig("shop", { notify: [{ url: "https://h.example.com", events: ["sync-done"] }] }),
      (err: unknown) => err instanceof ConfigError && /notify\[0\]\.events\[0\]/.test(err.message),
    );
    assert.deepEqual(envConfig("shop", { notify: [{ url: "https://h.example.com" }] }).notify[0]?.events, [
      "sync-started",
      "sync-succeeded",
      "sync-failed",
      "awaiting-approval",
      "drift-fight",
      "auto-rollback",
    ]);
  });
});

describe("delivery to a receiver on 127.0.0.1", () => {
  const received: Array<{ body: string; signature?: string; type?: string }> = [];
  let failuresLeft = 0;
  let status = 200;
  let url = "";
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({
        body,
        signature: req.headers["x-syncward-signature-256"] as string | undefined,
        type: req.headers["content-type"],
      });
      if (failuresLeft > 0) {
        failuresLeft--;
        res.writeHead(503).end();
      } else res.writeHead(status).end();
    });
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => server.close());

  const env = () =>
    envConfig("shop", { notify: [{ url, events: ["sync-succeeded"], secretEnv: "SYNCWARD_NOTIFY_KEY" }] });
  const notifier = (extra: NodeJS.ProcessEnv = {}) =>
    new Notifier({
      log: pino({ level: "silent" }),
      retryMs: [5, 5, 5],
      env: { SYNCWARD_NOTIFY_HOSTS: "127.0.0.1", SYNCWARD_NOTIFY_KEY: "s3cret-key", ...extra },
    });

  it("fails twice, then accepts: the same event three times, accepted once, its signature verifiable", async () => {
    received.length = 0;
    failuresLeft = 2;
    status = 200;
    const n = notifier();
    n.handle(started, env()); // not one of the target's events
    n.handle(succeeded, env());
    await n.idle();
    assert.equal(received.length, 3, "two refused attempts and the accepted one");
    const ids = received.map((r) => (JSON.parse(r.body) as { id: string }).id);
    assert.equal(new Set(ids).size, 1, "every attempt is the same event");
    const last = received.at(-1);
    assert.equal(last?.type, "application/cloudevents+json");
    assert.equal(last?.signature, signatureOf(last?.body ?? "", "s3cret-key"));
    assert.equal((JSON.parse(last?.body ?? "{}") as { type: string }).type, "dev.syncward.sync.succeeded");
  });

  it("a 4xx is not sent again", async () => {
    received.length = 0;
    failuresLeft = 0;
    status = 410;
    const n = notifier();
    n.handle(succeeded, env());
    await n.idle();
    assert.equal(received.length, 1);
  });

  it("a host the operator did not allow is never contacted", async () => {
    received.length = 0;
    status = 200;
    const n = notifier({ SYNCWARD_NOTIFY_HOSTS: "hooks.example.com" });
    n.handle(succeeded, env());
    await n.idle();
    assert.equal(received.length, 0);
  });

  it("without its key set, nothing is sent unsigned", async () => {
    received.length = 0;
    const n = notifier({ SYNCWARD_NOTIFY_KEY: "" });
    n.handle(succeeded, env());
    await n.idle();
    assert.equal(received.length, 0);
  });
});
