import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseProjects } from "../../../src/projects/load.ts";
import { MembershipLookupError, matchProject, type RepositoryFacts } from "../../../src/projects/match.ts";
import { memoryPins } from "../../../src/projects/pins-configmap.ts";

const org = parseProjects(
  readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "projects", "org.yaml"), "utf8"),
  "org.yaml",
);
const doc = (yaml: string) => parseProjects(yaml, "p.yaml");

/** A repository as the app sees it on GitHub: its id and its custom property values. */
function facts(id: number, properties: Record<string, string> = {}, pins = memoryPins()): RepositoryFacts {
  return { id: async () => id, properties: async () => new Map(Object.entries(properties)), pins };
}

// team-b's project as an operator writes it: a glob, only together with the team property.
const teams = doc(`projects:
  - {name: team-a, repositories: ["acme/api"], destinations: [{namespace: team-a}]}
  - {name: team-b, repositories: ["acme/team-b-*"], properties: {team: b}, destinations: [{namespace: "team-b-*"}]}
  - {name: globbed, repositories: ["acme/team-c-*"], destinations: [{namespace: "team-c-*"}]}
  - {name: own, repositories: ["*/*"], destinations: [{namespace: "{repo}"}]}
`);

describe("matchProject", () => {
  const table: Array<[string, string, string]> = [
    [
      "a glob, but not of a property project (the CLI reads no properties)",
      "acme/team-a-api",
      "default (repositories: */*)",
    ],
    ["an exact name, without case", "ACME/Payments", "team-a (repositories: acme/payments)"],
    ["the catch-all default, after the others", "other/tool", "default (repositories: */*)"],
  ];
  for (const [name, repo, expected] of table) {
    it(`the CLI (names only) matches by ${name}`, async () => {
      const m = await matchProject(org, repo);
      assert.equal(m.kind, "matched");
      if (m.kind === "matched") assert.equal(`${m.project.name} (${m.by})`, expected);
    });
  }

  it("no projects configured: today's behaviour", async () => {
    assert.deepEqual(await matchProject(undefined, "acme/x"), { kind: "none-configured" });
  });

  it("a newly created repository whose name matches another team's glob gains nothing", async () => {
    // No team property: not team-b's, and team-c's bare glob binds nothing in the app.
    const b = await matchProject(teams, "acme/team-b-x", facts(7));
    assert.equal(b.kind === "matched" && b.project.name, "own");
    const c = await matchProject(teams, "acme/team-c-x", facts(8));
    assert.equal(c.kind === "matched" && c.project.name, "own");
    // With the organization's property it is team-b's.
    const real = await matchProject(teams, "acme/team-b-api", facts(9, { team: "b" }));
    assert.equal(real.kind === "matched" && real.by, "repositories: acme/team-b-* with properties team=b");
  });

  it("a glob alone tells why it binds nothing (no catch-all project)", async () => {
    const m = await matchProject(
      doc('projects: [{name: c, repositories: ["acme/team-c-*"], destinations: [{namespace: "team-c-*"}]}]'),
      "acme/team-c-x",
      facts(1),
    );
    assert.equal(m.kind, "unmatched");
    assert.match(m.kind === "unmatched" ? m.reason : "", /anyone who may create repositories chooses names/);
  });

  it("a listed name is pinned to the repository's id at first sight: a re-created repository is not it", async () => {
    const pins = memoryPins();
    const first = await matchProject(teams, "acme/api", facts(100, {}, pins));
    assert.equal(first.kind === "matched" && first.project.name, "team-a");
    assert.equal(await pins.pinned("acme/api"), 100);
    const again = await matchProject(teams, "acme/API", facts(200, {}, pins));
    assert.equal(again.kind === "matched" && again.project.name, "own", "only its own namespace");
    const alone = await matchProject(
      doc(`projects: [${JSON.stringify(teams.projects[0])}]`),
      "acme/api",
      facts(200, {}, pins),
    );
    assert.match(
      alone.kind === "unmatched" ? alone.reason : "",
      /pinned to repository id 100 .* this repository is id 200/,
    );
  });

  it("refuses a repository no rule covers, listing the rules", async () => {
    const m = await matchProject(
      doc("projects: [{name: pay, properties: {team: pay}, destinations: [{namespace: pay}]}]"),
      "acme/other",
      facts(3),
    );
    assert.equal(
      m.kind === "unmatched" && m.reason,
      "acme/other belongs to no project, so syncward deploys nothing of it. No project's rule covers it: pay (properties team=pay). The operator adds \"acme/other\" to a project's repositories, or gives it a project's custom properties.",
    );
  });

  it("a property that cannot be read (or that repository admins may set) fails with its cause, naming the project", async () => {
    await assert.rejects(
      matchProject(
        doc("projects: [{name: pay, properties: {team: pay}, destinations: [{namespace: pay}]}]"),
        "acme/x",
        {
          ...facts(1),
          properties: async () => {
            throw new Error(
              "custom property team may be set by repository admins (values_editable_by: org_and_repo_actors)",
            );
          },
        },
      ),
      (err: unknown) =>
        err instanceof MembershipLookupError &&
        err.message ===
          "project pay: custom property team may be set by repository admins (values_editable_by: org_and_repo_actors)",
    );
  });
});
