// `resourceCustomizations` (Argo CD's resource.customizations health checks) are the operator's:
// the projects document holds them (top level, and per project), validated when it is read (keys,
// fields, whether each script compiles); a repository's .github/syncward.yml that carries them is
// refused, naming the field and where the operator sets them; useOpenLibs is refused everywhere.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import { healthChecksOf } from "../../../src/projects/health-checks.ts";
import { parseProjects } from "../../../src/projects/load.ts";

const FILE = "projects.yaml";
const ENV = `projects:
  - name: team-a
    repositories: ["acme/*"]
    destinations: [{ namespace: "*" }]
`;
const parseConfigText = (text: string, file: string) => parseProjects(text, file);

function problemsOf(text: string): string[] {
  try {
    parseConfigText(text, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail("the config was accepted");
}

describe("resourceCustomizations", () => {
  test("health.lua is read as written, keyed group/Kind (Kind alone for core)", () => {
    const config = parseConfigText(
      `${ENV}resourceCustomizations:
  cert-manager.io/Certificate:
    health.lua: |
      return { status = "Healthy" }
  Pod:
    health.lua: return { status = "Healthy" }
  "*.crossplane.io/*":
    health.lua: return { status = "Progressing" }
`,
      FILE,
    );
    assert.deepEqual(config.resourceCustomizations, {
      "cert-manager.io/Certificate": { "health.lua": 'return { status = "Healthy" }\n' },
      Pod: { "health.lua": 'return { status = "Healthy" }' },
      "*.crossplane.io/*": { "health.lua": 'return { status = "Progressing" }' },
    });
  });

  test("absent: no customizations", () => {
    assert.equal(parseConfigText(ENV, FILE).resourceCustomizations, undefined);
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

  test("useOpenLibs is refused: every script runs in the sandbox", () => {
    const problems = problemsOf(`${ENV}resourceCustomizations:
  Pod:
    health.lua: return {}
    health.lua.useOpenLibs: true
`);
    assert.equal(problems.length, 1);
    assert.match(
      problems[0] ?? "",
      /resourceCustomizations\.Pod\["health.lua.useOpenLibs"\]: is refused: every health script runs in syncward's sandbox/,
    );
  });

  test("a project's own checks win for their keys; the document's cover the rest", () => {
    const file = parseProjects(
      `projects:
  - name: team-a
    repositories: ["acme/*"]
    destinations: [{ namespace: "*" }]
    resourceCustomizations:
      Pod: { health.lua: "return { status = 'Degraded' }" }
  - name: team-b
    repositories: ["other/*"]
    destinations: [{ namespace: "*" }]
resourceCustomizations:
  Pod: { health.lua: "return { status = 'Healthy' }" }
  apps/Deployment: { health.lua: "return { status = 'Healthy' }" }
`,
      FILE,
    );
    const [a, b] = file.projects;
    assert.deepEqual(healthChecksOf(file, a), {
      Pod: { "health.lua": "return { status = 'Degraded' }" },
      "apps/Deployment": { "health.lua": "return { status = 'Healthy' }" },
    });
    assert.equal(
      healthChecksOf(file, a),
      healthChecksOf(file, a),
      "one object per project: scripts compile once",
    );
    assert.equal(healthChecksOf(file, b), file.resourceCustomizations);
    assert.equal(healthChecksOf(undefined, undefined), undefined);
  });
});

describe("a repository's config cannot carry resourceCustomizations", () => {
  const REPO = `environments:
  - name: dev
    source: { path: overlays/dev }
    destination: { namespace: dev }
resourceCustomizations:
  ConfigMap:
    health.lua: |
      os.execute("id > pwned")
      return { status = "Healthy", message = os.getenv("PRIVATE_KEY") }
`;

  test("it is refused, naming the field and where the operator sets checks instead", () => {
    try {
      parseConfig(REPO, ".github/syncward.yml");
      assert.fail("the config was accepted");
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      assert.equal(err.problems.length, 1);
      assert.match(
        err.problems[0] ?? "",
        /^\.github\/syncward\.yml(:\d+)?: resourceCustomizations: is not allowed in a repository's config: custom health checks \(Lua\) are the operator's; the operator sets them in syncward's projects document \(ConfigMap syncward-projects, key projects\.yaml/,
      );
    }
  });
});
