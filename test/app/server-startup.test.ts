// `npm start` (the compiled dist/github/server.js) that cannot start: one readable line on stderr
// naming what is wrong and how to fix it, exit code 1, no stack trace or library internals.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { before, describe, it } from "node:test";
import { ensureBuilt, ROOT } from "../support/built.ts";

const TEST_KEY = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();

function start(env: Record<string, string>) {
  const { PATH, HOME } = process.env;
  const r = spawnSync(process.execPath, ["dist/github/server.js"], {
    cwd: ROOT,
    env: {
      PATH,
      HOME,
      NODE_ENV: "production",
      APP_ID: "1",
      PRIVATE_KEY: TEST_KEY,
      WEBHOOK_SECRET: "test-secret-of-32-characters-xx",
      ...env,
    },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe("npm start: start-up failures", () => {
  before(() => ensureBuilt());

  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      "an invalid LOG_LEVEL",
      { LOG_LEVEL: "verbose" },
      /^syncward could not start: LOG_LEVEL: "verbose" is not a log level; use one of fatal, error, warn, info, debug, trace, silent\n$/,
    ],
    [
      "a missing APP_ID",
      { APP_ID: "" },
      /^syncward could not start: App ID is missing.*ensure the APP_ID environment variable is set\.\n$/,
    ],
    [
      "a PRIVATE_KEY that is no key",
      { PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----" },
      /^syncward could not start: PRIVATE_KEY: not a PEM private key; use the \.pem file GitHub generated for the app, whole, with its BEGIN and END lines\n$/,
    ],
    [
      "a PRIVATE_KEY_PATH that does not exist",
      { PRIVATE_KEY: "", PRIVATE_KEY_PATH: "/nonexistent/app.pem" },
      /^syncward could not start: PRIVATE_KEY_PATH \(\/nonexistent\/app\.pem\): cannot be read \(ENOENT\); mount the GitHub App's \.pem file there\n$/,
    ],
    [
      "a malformed SYNCWARD_STOP_TIMEOUT",
      { SYNCWARD_STOP_TIMEOUT: "soon" },
      /^syncward could not start: SYNCWARD_STOP_TIMEOUT: "soon" is not a duration.*terminationGracePeriodSeconds\n$/,
    ],
  ];
  for (const [what, env, expected] of cases)
    it(`${what}: one line with the fix, exit 1`, () => {
      const r = start(env);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, expected);
      assert.equal(r.stdout, "");
    });
});
