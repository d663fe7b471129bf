// A repository's runtime is stopped before its next delivery is handled (a config change
// rebuilds it): a report stuck on its way to GitHub must not hold that delivery up for long.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import pino from "pino";
import { parseConfig } from "../../src/config/load.ts";
import type { Octokit } from "../../src/github/octokit.ts";
import { RepoRuntime } from "../../src/github/runtime.ts";
import { unreachableClient } from "../support/app.ts";

/** Lets every promise callback that can run, run (setImmediate is not mocked). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe("stopping a repository's runtime", () => {
  it("waits a bounded time for a report GitHub holds (rate limit), then drops it and stops", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const runtime = new RepoRuntime(
      {
        id: 4711,
        owner: "acme",
        repo: "shop",
        installationId: 1,
        htmlUrl: "https://github.com/acme/shop",
        defaultBranch: "main",
      },
      parseConfig(
        "environments:\n  - name: dev\n    source: { path: . }\n    destination: { namespace: shop }\n",
      ),
      {
        client: unreachableClient(),
        stateNamespace: "syncward-test",
        cacheDir: mkdtempSync(join(tmpdir(), "syncward-stop-")),
        identity: "test",
        leases: false,
        watch: false,
        autoStart: false,
        log: pino({ level: "silent" }),
        // Octokit's throttling holding the request until x-ratelimit-reset: it never answers here.
        auth: () => new Promise<Octokit>(() => {}),
      },
    );
    runtime.reporter.handle({
      type: "outOfSync",
      instance: "acme-shop.dev",
      env: "dev",
      revision: "a".repeat(40),
      drifted: [],
      requiresPruning: [],
      reason: "Git moved on",
    });
    let stopped = false;
    void runtime.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false, "gives the report in flight a chance first");
    t.mock.timers.tick(10_000);
    await settle();
    assert.equal(stopped, true, "still waiting for GitHub to answer");
  });
});
