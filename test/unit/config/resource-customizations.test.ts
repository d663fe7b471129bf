// The top-level `resourceCustomizations` of .github/syncward.yml: Argo CD's resource.customizations
// health checks, validated at config load (keys, fields, and whether each script compiles).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";

const FILE = ".github/syncward.yml";
const ENV = `environments:
  - name: dev
    source: { path: overlays/dev }
    destination: { namespace: dev }
`;

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail("the config was accepted");
}

describe("resourceCustomizations", () => {
  test("health.lua and useOpenLibs are read as written, keyed group/Kind (Kind alone for core)", () => {
    const config = parseConfig(
      `${ENV}resourceCustomizations:
  cert-manager.io/Certificate:
    health.lua: |
      return { status = "Healthy" }
  Pod:
    health.lua: return { status = "Healthy" }
    health.lua.useOpenLibs: true
  "*.crossplane.io/*":
    health.lua: return { status = "Progressing" }
`,
      FILE,
    );
    assert.deepEqual(config.resourceCustomizations, {
      "cert-manager.io/Certificate": { "health.lua": 'return { status = "Healthy" }\n' },
      Pod: { "health.lua": 'return { status = "Healthy" }', "health.lua.useOpenLibs": true },
      "*.crossplane.io/*": { "health.lua": 'return { status = "Progressing" }' },
    });
  });

  test("absent: no customizations", () => {
    assert.equal(parseConfig(ENV, FILE).resourceCustomizations, undefined);
  });

  test("a script that does not compile is reported at load, with the script's line", () => {
    const problems = problemsOf(`${ENV}resourceCustomizations:
  cert-manager.io/Certificate:
    health.lua: |
      hs = {}
      if obj.status ~= nil then
        hs.status = "Healthy"
      return hs
`);
    assert.deepEqual(problems, [
      `${FILE}: resourceCustomizations["cert-manager.io/Certificate"]["health.lua"]: Lua does not compile (line 5 of the script): 'end' expected (to close 'if' at line 2) near <eof>`,
    ]);
  });

  test("an unknown field under a customization is named, with the closest known one", () => {
    const problems = problemsOf(`${ENV}resourceCustomizations:
  cert-manager.io/Certificate:
    health.luaa: return {}
    actions: |
      discovery.lua: return {}
`);
    assert.equal(problems.length, 2);
    assert.match(
      problems[0] ?? "",
      /resourceCustomizations\["cert-manager.io\/Certificate"\]\["health.luaa"\]: unknown field \(did you mean "health.lua"\?\)/,
    );
    assert.match(
      problems[1] ?? "",
      /resourceCustomizations\["cert-manager.io\/Certificate"\]\.actions: unknown field/,
    );
  });

  test("a key that is not group/Kind is refused", () => {
    const problems = problemsOf(`${ENV}resourceCustomizations:
  "cert-manager.io/v1/Certificate":
    health.lua: return {}
`);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? "", /"cert-manager.io\/v1\/Certificate" must be "group\/Kind"/);
  });

  test("useOpenLibs must be a boolean", () => {
    const problems = problemsOf(`${ENV}resourceCustomizations:
  Pod:
    health.lua: return {}
    health.lua.useOpenLibs: "yes"
`);
    assert.match(problems[0] ?? "", /\["health.lua.useOpenLibs"\]: must be true or false/);
  });
});
