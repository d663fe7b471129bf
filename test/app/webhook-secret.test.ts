// Start-up fails closed on the webhook secret: `npm start`'s entry (src/github/server.ts) run as a
// real process with a configured app but no usable WEBHOOK_SECRET exits with one readable line
// saying how to set it, before Probot (which would sign with "development") listens at all.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  checkWebhookSecret,
  effectiveEnv,
  MIN_WEBHOOK_SECRET,
  webhookSecretProblem,
} from "../../src/github/webhook-secret.ts";

const server = join(import.meta.dirname, "../../src/github/server.ts");

function start(env: Record<string, string>, cwd = mkdtempSync(join(tmpdir(), "syncward-secret-"))) {
  const { WEBHOOK_SECRET: _, ...rest } = process.env;
  return spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), server], {
    cwd,
    env: { ...rest, APP_ID: "1", PRIVATE_KEY: "not-a-key", PORT: "1", LOG_LEVEL: "silent", ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("WEBHOOK_SECRET at start-up", () => {
  it("refuses to start without WEBHOOK_SECRET, saying how to set it", () => {
    const r = start({});
    assert.equal(r.status, 78, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", /refuses to start: WEBHOOK_SECRET is not set/);
    assert.match(lines[0] ?? "", /openssl rand -hex 32/);
  });

  it("refuses a short secret, and an empty one in .env overrides the environment as Probot reads it", () => {
    assert.match(start({ WEBHOOK_SECRET: "hunter2" }).stderr, /is 7 characters, shorter than 16/);
    const cwd = mkdtempSync(join(tmpdir(), "syncward-secret-"));
    writeFileSync(join(cwd, ".env"), "WEBHOOK_SECRET=\n");
    const r = start({ WEBHOOK_SECRET: "x".repeat(40) }, cwd);
    assert.equal(r.status, 78, r.stderr);
    assert.match(r.stderr, /WEBHOOK_SECRET is not set/);
  });

  it("checks only a configured app: Probot's setup flow has no secret yet", () => {
    assert.equal(webhookSecretProblem({}), undefined);
    assert.equal(webhookSecretProblem({ APP_ID: "1" }), undefined);
    assert.match(webhookSecretProblem({ APP_ID: "1", PRIVATE_KEY_PATH: "/k.pem" }) ?? "", /not set/);
    assert.equal(
      webhookSecretProblem({ APP_ID: "1", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s".repeat(MIN_WEBHOOK_SECRET) }),
      undefined,
    );
  });

  it("with SYNCWARD_INSECURE_DEVELOPMENT=1 it starts, and every log line carries the warning", () => {
    const bindings: Record<string, string>[] = [];
    const log = {
      child(b: Record<string, string>) {
        bindings.push(b);
        return log;
      },
    };
    const env = { APP_ID: "1", PRIVATE_KEY: "k", SYNCWARD_INSECURE_DEVELOPMENT: "1" };
    const exit = (m: string): never => assert.fail(`exited: ${m}`);
    assert.equal(checkWebhookSecret(log, env, exit), log);
    assert.equal(bindings.length, 1);
    assert.match(bindings[0]?.insecure ?? "", /not a protection.*never run this way/);
    // Without the flag the same environment exits.
    assert.throws(
      () =>
        checkWebhookSecret(log, { APP_ID: "1", PRIVATE_KEY: "k" }, (m) => {
          throw new Error(m);
        }),
      /SYNCWARD_INSECURE_DEVELOPMENT=1 starts it anyway/,
    );
  });

  it("reads .env as Probot does (it wins over the environment)", () => {
    const cwd = mkdtempSync(join(tmpdir(), "syncward-secret-"));
    writeFileSync(join(cwd, ".env"), "WEBHOOK_SECRET=from-dotenv-file-0123\n");
    assert.equal(effectiveEnv(cwd).WEBHOOK_SECRET, "from-dotenv-file-0123");
  });
});
