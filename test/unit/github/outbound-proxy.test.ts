// GitHub requests and the proxy variables: Octokit's fetch goes through HTTPS_PROXY where Node can
// apply it at run time (Node 24, the image), and says so loudly where it cannot.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { useOutboundProxy } from "../../../src/github/outbound-proxy.ts";

function recorder() {
  const lines: Array<{ level: string; fields: unknown; msg: string }> = [];
  const at = (level: string) => (fields: unknown, msg: string) => lines.push({ level, fields, msg });
  return { lines, log: { info: at("info"), warn: at("warn") } as never };
}

describe("useOutboundProxy", () => {
  it("does nothing when no proxy variable is set", () => {
    const { lines, log } = recorder();
    let called = false;
    assert.equal(
      useOutboundProxy(log, { NO_PROXY: "x" }, () => {
        called = true;
        return () => {};
      }),
      "none",
    );
    assert.equal(called, false);
    assert.equal(lines.length, 0);
  });

  it("applies the environment and logs the variables' names, never their values", () => {
    const { lines, log } = recorder();
    let given: NodeJS.ProcessEnv | undefined;
    const env = { HTTPS_PROXY: "http://user:s3cret@proxy:3128" };
    const outcome = useOutboundProxy(log, env, (e) => {
      given = e;
      return () => {};
    });
    assert.equal(outcome, "enabled");
    assert.equal(given, env);
    assert.doesNotMatch(JSON.stringify(lines), /s3cret/);
    assert.match(lines[0]?.msg ?? "", /proxy/);
  });

  it("warns, naming what to do, on a Node that cannot apply it at run time", () => {
    const { lines, log } = recorder();
    assert.equal(useOutboundProxy(log, { https_proxy: "http://proxy:3128" }, null), "unsupported");
    assert.equal(lines[0]?.level, "warn");
    assert.match(lines[0]?.msg ?? "", /https_proxy set, .*NODE_USE_ENV_PROXY=1/);
  });

  it("sends Octokit's requests to GitHub through the proxy (where this Node supports it)", async () => {
    const supported =
      typeof (http as { setGlobalProxyFromEnv?: unknown }).setGlobalProxyFromEnv === "function";
    const seen: string[] = [];
    const proxy = http.createServer((_q, r) => r.writeHead(405).end());
    proxy.on("connect", (req, socket) => {
      seen.push(req.url ?? "");
      socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // A child process: the global proxy is process-wide state.
    const script = `
      import { Octokit } from "@octokit/rest";
      import { useOutboundProxy } from "./src/github/outbound-proxy.ts";
      const log = { info: () => {}, warn: (_f, m) => console.log("WARN " + m) };
      console.log("OUTCOME " + useOutboundProxy(log));
      try { await new Octokit({ request: { retries: 0 } }).rest.meta.getZen(); } catch (e) { console.log("FAILED"); }
    `;
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", script],
        { env: { ...process.env, HTTPS_PROXY: url, NO_PROXY: "" }, timeout: 30_000 },
      );
      if (supported) {
        assert.match(stdout, /OUTCOME enabled/);
        assert.deepEqual(seen, ["api.github.com:443"]);
      } else {
        assert.match(stdout, /OUTCOME unsupported/);
        assert.match(stdout, /WARN .*NODE_USE_ENV_PROXY/);
      }
    } finally {
      proxy.close();
    }
  });
});
