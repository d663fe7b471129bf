import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseProjects } from "../../../src/projects/load.ts";
import { matchProject, TeamLookupError } from "../../../src/projects/match.ts";

const org = parseProjects(
  readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "projects", "org.yaml"), "utf8"),
  "org.yaml",
);
const teamOnly = parseProjects(
  "projects: [{name: pay, teams: [acme/payments-devs], destinations: [{namespace: pay}]}]",
  "t.yaml",
);

describe("matchProject", () => {
  const table: Array<[string, string, string]> = [
    ["a glob", "acme/team-a-api", "team-a (repositories: acme/team-a-*)"],
    ["an exact name, without case", "ACME/Payments", "team-a (repositories: acme/payments)"],
    ["the catch-all default, after the others", "other/tool", "default (repositories: */*)"],
  ];
  for (const [name, repo, expected] of table) {
    it(`matches by ${name}`, async () => {
      const m = await matchProject(org, repo);
      assert.equal(m.kind, "matched");
      if (m.kind === "matched") assert.equal(`${m.project.name} (${m.by})`, expected);
    });
  }

  it("no projects configured: today's behaviour", async () => {
    assert.deepEqual(await matchProject(undefined, "acme/x"), { kind: "none-configured" });
  });

  it("matches through a team's repositories, asked once per team", async () => {
    const asked: string[] = [];
    const m = await matchProject(teamOnly, "acme/ledger", async (team) => {
      asked.push(team);
      return ["acme/ledger", "acme/wallet"];
    });
    assert.equal(m.kind === "matched" && m.by, "teams: acme/payments-devs");
    assert.deepEqual(asked, ["acme/payments-devs"]);
  });

  it("refuses a repository no rule covers, listing the rules", async () => {
    const m = await matchProject(teamOnly, "acme/other", async () => ["acme/ledger"]);
    assert.equal(m.kind, "unmatched");
    assert.equal(
      m.kind === "unmatched" && m.reason,
      "acme/other belongs to no project, so syncward deploys nothing of it. No project's rule covers it: pay (teams acme/payments-devs). The operator adds \"acme/other\" (or a glob matching it) to a project's repositories, or a team with access to it to a project's teams.",
    );
  });

  it("an empty projects list refuses everything and says how to keep today's behaviour", async () => {
    const m = await matchProject({ projects: [] }, "acme/x");
    assert.match(
      m.kind === "unmatched" ? m.reason : "",
      /a "default" project with repositories: \["\*\/\*"\]/,
    );
  });

  it("a team that cannot be listed fails with its cause, naming project and team", async () => {
    await assert.rejects(
      matchProject(teamOnly, "acme/x", async () => {
        throw new Error("GitHub answered 403: Resource not accessible by integration");
      }),
      (err: unknown) =>
        err instanceof TeamLookupError &&
        err.message ===
          "project pay: cannot list the repositories of team acme/payments-devs: GitHub answered 403: Resource not accessible by integration",
    );
  });
});
