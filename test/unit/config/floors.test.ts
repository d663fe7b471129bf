// Floors the repository cannot lower (config/floors.ts, projects/narrow.ts): the operator says which
// destinations are production, and there the floor holds whatever the repository's config says.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyFloors, floorsFromEnv } from "../../../src/config/floors.ts";
import { parseProjects } from "../../../src/projects/load.ts";
import { narrowEnvironment } from "../../../src/projects/narrow.ts";
import type { Project } from "../../../src/projects/types.ts";
import { envConfig } from "../../support/env.ts";

const project = parseProjects(
  `projects:
  - name: pay
    repositories: ["acme/pay"]
    destinations: [{namespace: "pay-prod", production: true}, {namespace: "pay-dev"}]
    floors: {productionApprovals: 2, requiredChecks: [ci], approverPermission: maintain}
`,
  "p.yaml",
).projects[0] as Project;

describe("operator floors", () => {
  it("production: false on an operator's production destination is still gated", () => {
    const env = narrowEnvironment(project, envConfig("pay-prod", { production: false }));
    assert.equal(env.production, true);
    assert.equal(env.approval?.minimum, 2);
    assert.deepEqual(env.requireChecks, ["ci"]);
    assert.deepEqual(env.floor, { sources: ["project pay"], approverPermission: "maintain" });
  });

  it("allowAuthor: true and commands.approve: read are raised, not kept", () => {
    const env = narrowEnvironment(
      project,
      envConfig("pay-prod", {
        approval: { minimum: 1, allowAuthor: true, users: ["alice"] },
        commands: { approve: "read" },
      }),
    );
    assert.equal(env.approval?.allowAuthor, false);
    assert.equal(env.approval?.minimum, 2);
    assert.equal(env.commands.approve, "maintain");
    assert.deepEqual(env.approval?.users, ["alice"], "the repository can add approvers");
  });

  it("a destination the operator does not mark production keeps the repository's choice", () => {
    const env = narrowEnvironment(project, envConfig("pay-dev"));
    assert.equal(env.approval, undefined);
    assert.equal(env.floor, undefined);
  });

  it("the repository can only add: a higher minimum and more checks stay", () => {
    const env = narrowEnvironment(
      project,
      envConfig("pay-prod", { approval: { minimum: 3 }, requireChecks: ["lint", "ci"] }),
    );
    assert.equal(env.approval?.minimum, 3);
    assert.deepEqual(env.requireChecks, ["lint", "ci"]);
  });

  it("SYNCWARD_MIN_PRODUCTION_APPROVALS holds production environments the same way", () => {
    const floors = floorsFromEnv({ SYNCWARD_MIN_PRODUCTION_APPROVALS: "1" });
    const env = applyFloors(
      envConfig("prod", {
        production: true,
        approval: { minimum: 1, allowAuthor: true },
        commands: { approve: "read" },
      }),
      floors,
    );
    assert.equal(env.approval?.allowAuthor, false);
    assert.equal(env.commands.approve, "write");
    assert.deepEqual(env.floor, {
      sources: ["SYNCWARD_MIN_PRODUCTION_APPROVALS"],
      approverPermission: "write",
    });
    // Applied again on load (the project's, then the installation's): nothing is lost.
    const twice = applyFloors(narrowEnvironment(project, envConfig("pay-prod")), floors);
    assert.deepEqual(twice.floor, {
      sources: ["project pay", "SYNCWARD_MIN_PRODUCTION_APPROVALS"],
      approverPermission: "maintain",
    });
  });
});

describe("a floor of checks alone", () => {
  it("adds the checks and gates nothing by approval", () => {
    const checks = applyFloors(envConfig("prod", { production: true }), [
      { source: "p", requiredChecks: ["ci"] },
    ]);
    assert.equal(checks.approval, undefined);
    assert.deepEqual(checks.requireChecks, ["ci"]);
  });
});
