import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import {
  createLogger,
  logLevel,
  maskSecretObjects,
  prettyWanted,
  REDACTED,
} from "../../../src/observability/logger.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const log = createLogger({ level: "info", destination });
  return { log, text: () => lines.join("") };
}

const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEsecretsecret\n-----END RSA PRIVATE KEY-----";

describe("createLogger", () => {
  it("redacts credentials at the top level and nested", () => {
    const { log, text } = capture();
    log.info({ privateKey: PEM, webhookSecret: "whsec-top" }, "starting");
    log.info({ options: { PRIVATE_KEY: PEM, token: "ghs_nested_token" } }, "options");
    log.info(
      { req: { method: "GET", headers: { authorization: "token ghs_header_token", accept: "*/*" } } },
      "req",
    );
    log.error({ err: { request: { headers: { authorization: "bearer jwt-in-error" } } } }, "request failed");
    const out = text();
    for (const secret of [
      "MIIEsecretsecret",
      "whsec-top",
      "ghs_nested_token",
      "ghs_header_token",
      "jwt-in-error",
    ]) {
      assert.ok(!out.includes(secret), `${secret} leaked into the log: ${out}`);
    }
    assert.ok(out.includes(REDACTED));
    assert.ok(out.includes('"accept":"*/*"'), "other headers stay");
  });

  it("masks the values of Kubernetes Secrets anywhere in a logged object, not of ConfigMaps", () => {
    const { log, text } = capture();
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "db",
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"password":"aHVudGVyMg=="}}',
        },
      },
      data: { password: "aHVudGVyMg==" },
      stringData: { url: "postgres://u:hunter2@db" },
    };
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
      data: { color: "blue" },
    };
    log.warn({ objects: [configMap, { wrapper: { live: secret } }] }, "drift");
    const out = text();
    assert.ok(!out.includes("aHVudGVyMg=="), out);
    assert.ok(!out.includes("hunter2"), out);
    assert.ok(out.includes('"password":"[Redacted]"'), "key names stay visible");
    assert.ok(out.includes('"color":"blue"'), "ConfigMap data is not masked");
    // The caller's object is untouched.
    assert.equal(secret.data.password, "aHVudGVyMg==");
  });

  it("returns objects without Secrets as they are", () => {
    const value = { a: [{ kind: "ConfigMap", data: { x: "1" } }], b: "text" };
    assert.equal(maskSecretObjects(value), value);
  });
});

describe("createLogger: errors and environments", () => {
  it("logs a failed GitHub request with its type and stack, never its token", async () => {
    const { RequestError } = await import("@octokit/request-error");
    const { log, text } = capture();
    const err = new RequestError("Server Error", 502, {
      request: {
        method: "POST",
        url: "https://api.github.com/repos/acme/shop/check-runs",
        headers: { authorization: "token ghs_in_a_failed_request" },
        body: { token: "ghs_in_the_body" },
      },
      response: {
        status: 502,
        url: "https://api.github.com/repos/acme/shop/check-runs",
        headers: { "x-github-request-id": "abc" },
        data: "",
      },
    });
    log.child({ app: "acme/shop", environment: "prod" }).warn({ err }, "check run failed");
    const line = JSON.parse(text());
    assert.equal(line.err.type, "RequestError");
    assert.equal(line.err.status, 502);
    assert.match(line.err.stack, /Error: Server Error\n\s+at /);
    assert.equal(line.app, "acme/shop");
    assert.equal(line.environment, "prod");
    assert.doesNotMatch(text(), /ghs_in_a_failed_request|ghs_in_the_body/);
  });
});

describe("prettyWanted", () => {
  const table: Array<[boolean | undefined, NodeJS.ProcessEnv, boolean]> = [
    [true, {}, true],
    [true, { LOG_FORMAT: "json" }, false],
    [false, {}, false],
    [undefined, {}, false],
    [true, { LOG_FORMAT: "pretty" }, true],
  ];
  for (const [isTTY, env, expected] of table) {
    it(`tty=${isTTY} ${JSON.stringify(env)} -> ${expected}`, () =>
      assert.equal(prettyWanted(isTTY, env), expected));
  }
});

describe("createLogger: one key each, quiet probes, checked levels", () => {
  function captureAt(level: "info" | "debug") {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { log: createLogger({ level, destination }), lines };
  }

  it("prints every key once: a child's name (Probot's probot, http) becomes component", () => {
    const { log, lines } = captureAt("info");
    log
      .child({ name: "probot" })
      .child({ name: "http", app: "acme-shop" })
      .child({ app: "acme-docs" })
      .info("hello");
    const [line] = lines;
    assert.ok(line);
    for (const key of ["name", "component", "app"])
      assert.equal(line.split(`"${key}":`).length - 1, 1, `one "${key}" in ${line}`);
    assert.deepEqual(
      [JSON.parse(line).name, JSON.parse(line).component, JSON.parse(line).app],
      ["syncward", "http", "acme-docs"],
    );
  });

  it("logs probes and scrapes at debug and every other request at info", () => {
    const info = captureAt("info");
    const http = info.log.child({ name: "probot" }).child({ name: "http" });
    for (const path of ["/healthz", "/readyz", "/metrics", "/readyz?x=1"])
      http.info({ res: { statusCode: 200 } }, `GET ${path} 200 - 1ms`);
    http.info({ res: { statusCode: 200 } }, "POST /api/github/webhooks 200 - 12ms");
    assert.deepEqual(
      info.lines.map((l) => JSON.parse(l).msg),
      ["POST /api/github/webhooks 200 - 12ms"],
    );
    const debug = captureAt("debug");
    debug.log.child({ name: "http" }).info({}, "GET /metrics 200 - 3ms");
    assert.deepEqual(
      debug.lines.map((l) => [JSON.parse(l).level, JSON.parse(l).msg]),
      [[20, "GET /metrics 200 - 3ms"]],
    );
  });

  it("refuses an unknown level, naming it and the valid ones", () => {
    assert.equal(logLevel(undefined), "info");
    assert.equal(logLevel("debug"), "debug");
    assert.throws(
      () => logLevel("verbose"),
      /^Error: LOG_LEVEL: "verbose" is not a log level; use one of fatal, error, warn, info, debug, trace, silent$/,
    );
  });
});
