// Custom health checks in Lua (resourceCustomizations), over live-object fixtures: scripts in the
// style Argo CD users keep in argocd-cm, and scripts that misbehave. A misbehaving script gives
// Unknown naming the kind and the problem; the next object is still assessed.
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ResourceCustomizations } from "../../../src/config/types.ts";
import { assessHealth, compileHealthChecks } from "../../../src/engine/health/index.ts";
import type { Health } from "../../../src/engine/result.ts";
import type { KubeObject } from "../../../src/kube/object.ts";
import { FIXTURES, loadFixture } from "./fixtures.ts";

const script = (name: string) => readFileSync(join(FIXTURES, "lua", name), "utf8");
const obj = (apiVersion: string, kind: string, rest: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name: "x", namespace: "shop" }, ...rest }) as KubeObject;

const CUSTOM: ResourceCustomizations = {
  "cert-manager.io/Certificate": { "health.lua": script("certificate.lua") },
  "argoproj.io/Rollout": { "health.lua": script("rollout.lua") },
  "*.widgets.example.com/*": { "health.lua": script("wildcard.lua") },
};

describe("Lua health checks", () => {
  const checks = compileHealthChecks(CUSTOM);

  const cases: Array<{ name: string; object: () => KubeObject; want: Health }> = [
    {
      name: "Certificate-like: issuing is Progressing, message built with table.getn",
      object: () => loadFixture("certificate-issuing.yaml"),
      want: {
        status: "Progressing",
        message: "Issuing (1 DNS name): Issuing certificate as Secret does not exist",
      },
    },
    {
      name: "Certificate-like: Ready True is Healthy",
      object: () => loadFixture("conditions-ready-true.yaml"),
      want: { status: "Healthy", message: "Certificate is up to date and has not expired" },
    },
    {
      name: "Rollout-like: paused, integers print without .0 (unpack as in Lua 5.1)",
      object: () => loadFixture("rollout-paused-canary.yaml"),
      want: { status: "Suspended", message: "CanaryPauseStep: 1 of 4 updated" },
    },
    {
      name: "Rollout-like: aborted",
      object: () => loadFixture("rollout-aborted.yaml"),
      want: { status: "Degraded", message: "aborted at step 0" },
    },
    {
      name: "Rollout-like: string.format %d of JSON integers",
      object: () => loadFixture("rollout-healthy.yaml"),
      want: { status: "Healthy", message: "4/4 available" },
    },
    {
      name: "wildcard group and kind: a kind of a sub-group",
      object: () => obj("eu.widgets.example.com/v1", "Gadget", { status: { phase: "Ready" } }),
      want: { status: "Healthy", message: "Gadget is ready" },
    },
    {
      name: "wildcard group and kind: loadstring of source text works",
      object: () => obj("us.widgets.example.com/v2", "Sprocket", { status: { phase: "Failed" } }),
      want: { status: "Degraded", message: "Sprocket failed" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(checks.assess(c.object()), c.want));
  }

  test("a kind no script covers keeps the built-in rule (the wildcard needs a sub-group)", () => {
    assert.equal(checks.assess(obj("widgets.example.com/v1", "Gadget")), undefined);
    assert.deepEqual(assessHealth(loadFixture("deployment-paused.yaml"), checks), {
      status: "Suspended",
      message: "Deployment is paused",
    });
  });

  test("a custom script wins over the built-in rule for its kind", () => {
    const custom = compileHealthChecks({
      "apps/Deployment": { "health.lua": 'return { status = "Healthy", message = "judged by Lua" }' },
    });
    const paused = loadFixture("deployment-paused.yaml");
    assert.equal(assessHealth(paused)?.status, "Suspended");
    assert.deepEqual(assessHealth(paused, custom), { status: "Healthy", message: "judged by Lua" });
  });

  test("an object being deleted is Pending deletion before its custom check runs, as in Argo CD", () => {
    const custom = compileHealthChecks({
      "apps/Deployment": { "health.lua": 'return { status = "Healthy", message = "judged by Lua" }' },
    });
    assert.deepEqual(assessHealth(loadFixture("deployment-pending-deletion.yaml"), custom), {
      status: "Progressing",
      message: "Pending deletion",
    });
  });

  test("core kinds are keyed by Kind alone, as in Argo CD; an exact key beats an earlier wildcard", () => {
    const custom = compileHealthChecks({
      "*": { "health.lua": 'return { status = "Degraded", message = "wildcard" }' },
      Pod: { "health.lua": 'return { status = "Healthy", message = "exact" }' },
    });
    assert.deepEqual(custom.assess(obj("v1", "Pod")), { status: "Healthy", message: "exact" });
    assert.deepEqual(custom.assess(obj("v1", "Service")), { status: "Degraded", message: "wildcard" });
  });

  test("globals a script sets do not leak from one object to the next", () => {
    const custom = compileHealthChecks({
      Pod: {
        "health.lua": "count = (count or 0) + 1\nreturn { status = 'Healthy', message = tostring(count) }",
      },
    });
    assert.equal(custom.assess(obj("v1", "Pod"))?.message, "1");
    assert.equal(custom.assess(obj("v1", "Pod"))?.message, "1");
  });

  test("objects read as plain tables: pairs, next, #, identity and every field (managedFields too)", () => {
    const custom = compileHealthChecks({
      Pod: {
        "health.lua": `local keys = {}
for k, v in pairs(obj.metadata.labels) do keys[#keys + 1] = k .. "=" .. v end
table.sort(keys)
local parts = {
  table.concat(keys, ","),
  tostring(next(obj.spec) ~= nil),
  tostring(next(obj.spec.empty) == nil),
  tostring(#obj.spec.containers),
  tostring(obj.status == obj.status),
  obj.metadata.managedFields[1].manager,
  tostring(obj.spec.missing),
  tostring(obj.spec.ratio),
}
return { status = "Healthy", message = table.concat(parts, " ") }`,
      },
    });
    const pod = obj("v1", "Pod", {
      spec: { containers: [{ name: "a" }, { name: "b" }], empty: {}, ratio: 0.5 },
      status: { phase: "Running" },
    });
    pod.metadata.labels = { tier: "web", app: "shop" };
    pod.metadata.managedFields = [{ manager: "syncward" }];
    assert.deepEqual(custom.assess(pod), {
      status: "Healthy",
      message: "app=shop,tier=web true true 2 true syncward nil 0.5",
    });
  });

  test("scripts are compiled once per config: the same customizations give the same checks", () => {
    assert.equal(compileHealthChecks(CUSTOM), checks);
  });

  const bad: Array<{ name: string; lua: string; message: RegExp }> = [
    {
      name: "a script that errors",
      lua: "local s = obj.status.missing.field\nreturn { status = 'Healthy' }",
      message:
        /^health\.lua for example\.com\/Thing: health\.lua:1: attempt to index a nil value \(field 'missing'\)$/,
    },
    {
      name: "a script that loops forever",
      lua: "while true do end",
      message: /^health\.lua for example\.com\/Thing: exceeded its budget of 200000 instructions$/,
    },
    {
      name: "a script that returns a bad status",
      lua: "return { status = 'Fine', message = 'all good' }",
      message: /returned an invalid health status "Fine" \(expected Healthy, Progressing/,
    },
    {
      name: "a script that returns no table",
      lua: "return 'Healthy'",
      message: /returned string, not a table with status and message/,
    },
    {
      name: "a script that returns nothing",
      lua: "local x = 1",
      message: /returned nil, not a table/,
    },
    {
      name: "a script whose message is not a string",
      lua: "return { status = 'Healthy', message = { 'a' } }",
      message: /returned a message of type table, not a string/,
    },
    {
      name: "a script that tries os.execute",
      lua: "os.execute('touch /tmp/syncward-lua-pwned')\nreturn { status = 'Healthy' }",
      message: /health\.lua:1: attempt to call a nil value \(field 'execute'\)/,
    },
    {
      name: "a script that opens a file",
      lua: "local f = io.open('/etc/passwd')\nreturn { status = 'Healthy' }",
      message: /attempt to index a nil value \(global 'io'\)/,
    },
    {
      name: "a script that requires a module from disk",
      lua: "local m = require('socket')\nreturn { status = 'Healthy' }",
      message:
        /require\("socket"\): health scripts may require only string, table, math, utf8, coroutine and os/,
    },
    {
      name: "a script that runs a file",
      lua: "dofile('/etc/passwd')\nreturn { status = 'Healthy' }",
      message: /attempt to call a nil value \(global 'dofile'\)/,
    },
    {
      name: "a script that asks for a gigabyte string",
      lua: "local s = string.rep('x', 2^30)\nreturn { status = 'Healthy' }",
      message: /health\.lua:1: string\.rep would loop 1073741824 times \(limit 1000000\)/,
    },
    {
      name: "a script that recurses without end",
      lua: "local function f(n) return f(n + 1) + 1 end\nreturn { status = 'Healthy', message = f(1) }",
      message: /stack overflow|exceeded its budget/,
    },
  ];
  for (const b of bad) {
    test(`${b.name} gives Unknown, and the next object is still assessed`, () => {
      const custom = compileHealthChecks(
        {
          "example.com/Thing": { "health.lua": b.lua },
          "example.com/Other": { "health.lua": "return { status = 'Healthy', message = 'fine' }" },
        },
        { instructions: 200_000, timeMs: 5_000, memoryBytes: 64 << 20 },
      );
      const health = custom.assess(obj("example.com/v1", "Thing", { status: {} }));
      assert.equal(health?.status, "Unknown");
      assert.match(health?.message ?? "", b.message);
      // The same script again, and another one: the VM is still usable.
      assert.equal(custom.assess(obj("example.com/v1", "Thing", { status: {} }))?.status, "Unknown");
      assert.deepEqual(custom.assess(obj("example.com/v1", "Other")), { status: "Healthy", message: "fine" });
    });
  }

  test("os.execute did not run", () => {
    assert.equal(existsSync("/tmp/syncward-lua-pwned"), false);
  });

  test("the time budget stops a loop that stays under the instruction budget", () => {
    const custom = compileHealthChecks(
      { "example.com/Thing": { "health.lua": "while true do end" } },
      { instructions: Number.MAX_SAFE_INTEGER, timeMs: 50, memoryBytes: 64 << 20 },
    );
    assert.match(
      custom.assess(obj("example.com/v1", "Thing"))?.message ?? "",
      /exceeded its time budget of 50 ms/,
    );
  });

  test("the sandbox keeps os.time and os.date, and require('os') gives the same reduced os", () => {
    const custom = compileHealthChecks({
      Pod: {
        "health.lua":
          "local o = require('os')\nreturn { status = 'Healthy', message = type(os.time()) .. ' ' .. tostring(o.execute) .. ' ' .. tostring(o.getenv) }",
      },
    });
    assert.deepEqual(custom.assess(obj("v1", "Pod")), { status: "Healthy", message: "number nil nil" });
  });

  test("print is silent: a script's debugging output never reaches stdout", () => {
    const custom = compileHealthChecks({
      Pod: { "health.lua": "print('debug')\nreturn { status = 'Healthy' }" },
    });
    assert.deepEqual(custom.assess(obj("v1", "Pod")), { status: "Healthy" });
  });
});

process.on("exit", () => rmSync("/tmp/syncward-lua-pwned", { force: true }));
