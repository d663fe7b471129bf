import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { ConfigError } from "../../../src/config/config-error.ts";
import { loadProjectsFile, parseProjects, projectsFileFrom } from "../../../src/projects/load.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "projects");
const FILE = "projects.yaml";

function problemsOf(text: string): string[] {
  try {
    parseProjects(text, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail("the projects document was accepted");
}

const one = (fields: Record<string, unknown>) =>
  stringify({
    projects: [{ name: "team-a", repositories: ["acme/*"], destinations: [{ namespace: "a-*" }], ...fields }],
  });

describe("projects document", () => {
  it("reads a whole organization's projects with their defaults", () => {
    const file = parseProjects(readFileSync(join(FIXTURES, "org.yaml"), "utf8"), FILE);
    assert.deepEqual(
      file.projects.map((p) => p.name),
      ["team-a", "default"],
    );
    const [a, fallback] = file.projects;
    assert.equal(a?.syncWindows[0]?.duration, 60 * 3_600_000);
    assert.deepEqual(a?.floors, {
      productionApprovals: 2,
      requireSignedCommits: true,
      forkPreviews: "never",
    });
    assert.deepEqual(fallback?.clusterResourceWhitelist, []);
    assert.deepEqual(fallback?.floors, {});
    assert.deepEqual(a?.properties, { team: "payments" });
    assert.deepEqual(fallback?.properties, {});
  });

  const cases: Array<[string, string, string[]]> = [
    [
      "an unknown field, with a suggestion",
      one({ destination: [] }),
      [`${FILE}: projects[0].destination: unknown field (did you mean "destinations"?)`],
    ],
    [
      "a repository that is not owner/name",
      one({ repositories: ["team-a"] }),
      [
        `${FILE}: projects[0].repositories[0]: "team-a" is not a repository glob: write "owner/name" ("*" and "?" match)`,
      ],
    ],
    [
      "a ServiceAccount with two colons",
      one({ destinations: [{ namespace: "a", serviceAccount: "a:b:c" }] }),
      [
        `${FILE}: projects[0].destinations[0].serviceAccount: "a:b:c" is not a ServiceAccount: write NAME (in the destination namespace) or NAMESPACE:NAME`,
      ],
    ],
    [
      "a project covering nothing",
      one({ repositories: [] }),
      [`${FILE}: projects[0].repositories: covers nothing: list repositories (names or globs) or properties`],
    ],
    [
      "no destinations",
      one({ destinations: [] }),
      [
        `${FILE}: projects[0].destinations: must list at least one destination (a project that may deploy nowhere covers nothing)`,
      ],
    ],
    [
      "teams, which a repository admin could grant",
      one({ teams: ["acme/sre"] }),
      [
        `${FILE}: projects[0].teams: is no longer accepted: a repository admin can grant any team access to their repository, so team access cannot decide membership. List the repositories by name, or select them by an organization custom property (properties)`,
      ],
    ],
    [
      "a misspelt window kind",
      one({ syncWindows: [{ kind: "dney", schedule: "* * * * *", duration: "1h" }] }),
      [`${FILE}: projects[0].syncWindows[0].kind: must be "allow" or "deny" (did you mean "deny"?)`],
    ],
    [
      "a floor that is not 'never'",
      one({ floors: { forkPreviews: "always" } }),
      [`${FILE}: projects[0].floors.forkPreviews: must be "never"`],
    ],
  ];
  for (const [name, text, expected] of cases) {
    it(`names the field of ${name}`, () => {
      assert.deepEqual(problemsOf(text), expected);
    });
  }

  it("names both places of a duplicate project name", () => {
    const text = stringify({
      projects: [
        { name: "a", repositories: ["o/*"], destinations: [{ namespace: "x" }] },
        { name: "a", repositories: ["o/b"], destinations: [{ namespace: "y" }] },
      ],
    });
    assert.deepEqual(problemsOf(text), [
      `${FILE}: projects[1].name: duplicate project name "a" (also projects[0].name)`,
    ]);
  });

  it("refuses custom YAML tags (evil fixture) and an empty document", () => {
    assert.match(
      problemsOf(readFileSync(join(FIXTURES, "evil.yaml"), "utf8"))[0] ?? "",
      /custom YAML tags are not allowed/,
    );
    assert.deepEqual(problemsOf(""), [`${FILE}: is empty: it must define \`projects\``]);
  });

  it("reads --projects before SYNCWARD_PROJECTS_FILE, and a missing file is named", async () => {
    assert.equal(projectsFileFrom("a.yaml", { SYNCWARD_PROJECTS_FILE: "b.yaml" }), "a.yaml");
    assert.equal(projectsFileFrom(undefined, { SYNCWARD_PROJECTS_FILE: "b.yaml" }), "b.yaml");
    assert.equal(projectsFileFrom(undefined, {}), undefined);
    const dir = mkdtempSync(join(tmpdir(), "projects-"));
    await assert.rejects(loadProjectsFile(join(dir, "none.yaml")), /none\.yaml: file not found/);
    writeFileSync(join(dir, "p.yaml"), one({}));
    assert.equal((await loadProjectsFile(join(dir, "p.yaml"))).projects[0]?.name, "team-a");
  });
});
