// The GitHub App as it runs in production (`npm start`): webhook signatures are verified, and the
// health, readiness and metrics endpoints answer. Real process, real HTTP, real cluster.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureBuilt } from "../support/built.ts";
import { eventually, testKubeconfig } from "../support/cluster.ts";
import { ACCOUNT_NAMESPACE, syncwardKubeconfig } from "../support/syncward-account.ts";

const SECRET = "test-webhook-secret";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("npm start (compiled, probot run)", () => {
  let child: ChildProcess;
  let base: string;
  let output = "";

  before(async () => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), "syncward-app-"));
    const key = join(dir, "app.pem");
    execFileSync("openssl", ["genrsa", "-out", key, "2048"], { stdio: "ignore" });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["dist/github/server.js"], {
      env: {
        ...process.env,
        APP_ID: "1",
        PRIVATE_KEY_PATH: key,
        WEBHOOK_SECRET: SECRET,
        // As deploy/ runs it: its ServiceAccount, state in the account's own namespace.
        SYNCWARD_KUBECONFIG: syncwardKubeconfig(testKubeconfig()),
        SYNCWARD_STATE_NAMESPACE: ACCOUNT_NAMESPACE,
        SYNCWARD_TREE_CACHE: join(dir, "trees"),
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    await eventually(
      "the app to answer /healthz",
      async () => (await fetch(`${base}/healthz`)).status === 200,
      60_000,
    );
  });

  after(() => {
    child.kill("SIGTERM");
  });

  const deliver = (body: string, signature: string) =>
    fetch(`${base}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": String(Math.random()),
        "x-hub-signature-256": signature,
      },
      body,
    });

  it("rejects a webhook whose signature does not match the secret", async () => {
    const res = await deliver('{"zen":"x"}', "sha256=deadbeef");
    assert.equal(res.status, 400, output);
  });

  it("accepts a correctly signed webhook", async () => {
    const body = '{"zen":"Keep it logically awesome."}';
    const sig = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const res = await deliver(body, sig);
    assert.equal(res.status, 200, output);
  });

  it("reports ready once the cluster answers, and serves Prometheus metrics", async () => {
    await eventually("ready", async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
    const text = await (await fetch(`${base}/metrics`)).text();
    assert.match(text, /# TYPE syncward_syncs_total counter/);
    assert.match(text, /syncward_kubernetes_requests_total\{[^}]*verb="GET"[^}]*\} [1-9]/);
  });
});
