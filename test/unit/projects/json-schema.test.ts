import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { buildProjectsJsonSchema, PROJECTS_SCHEMA_ID } from "../../../src/projects/json-schema.ts";
import { parseProjects } from "../../../src/projects/load.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const committed = JSON.parse(readFileSync(join(root, "schema", "syncward-projects.schema.json"), "utf8"));

describe("schema/syncward-projects.schema.json", () => {
  it("is what tools/gen-schema.ts generates from the zod schema", () => {
    assert.deepEqual(committed, buildProjectsJsonSchema());
    assert.equal(committed.$id, PROJECTS_SCHEMA_ID);
  });

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(committed);

  it("accepts the organization fixture and deploy/'s default project as written", () => {
    const org = parse(readFileSync(join(root, "test", "fixtures", "projects", "org.yaml"), "utf8"));
    assert.ok(validate(org), JSON.stringify(validate.errors));
    const cm = parse(readFileSync(join(root, "deploy", "projects-default.yaml"), "utf8"));
    const shipped = parse(cm.data["projects.yaml"]);
    assert.ok(validate(shipped), JSON.stringify(validate.errors));
    // The shipped project is safe organization-wide: each repository in its own namespace only.
    assert.equal(cm.metadata.name, "syncward-projects-default", "never the operator's syncward-projects");
    const [only, ...others] = parseProjects(
      cm.data["projects.yaml"],
      "deploy/projects-default.yaml",
    ).projects;
    assert.deepEqual(others, []);
    assert.equal(only?.name, "own-namespace");
    assert.deepEqual(only?.repositories, ["*/*"]);
    assert.deepEqual(only?.destinations, [{ namespace: "{repo}" }]);
    assert.deepEqual(only?.clusterResourceWhitelist, []);
    assert.deepEqual(only?.namespaceResourceBlacklist, []);
  });

  const rejected: Array<[string, unknown]> = [
    [
      "an unknown field",
      {
        projects: [{ name: "a", repositories: ["o/*"], destinations: [{ namespace: "x" }], sourceRepos: [] }],
      },
    ],
    [
      "a destination without a namespace",
      { projects: [{ name: "a", repositories: ["o/*"], destinations: [{}] }] },
    ],
    ["no projects key", {}],
  ];
  for (const [name, data] of rejected)
    it(`rejects ${name}, like the parser`, () => assert.equal(validate(data), false));
});
