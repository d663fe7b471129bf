import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { buildJsonSchema, SCHEMA_ID } from "../../../src/config/json-schema.ts";

const root = join(import.meta.dirname, "..", "..", "..");
const committed = JSON.parse(readFileSync(join(root, "schema", "syncward.schema.json"), "utf8"));
const fixture = (name: string) =>
  parse(readFileSync(join(root, "test", "fixtures", "config", name), "utf8"), { merge: true });

describe("schema/syncward.schema.json", () => {
  it("is what tools/gen-schema.ts generates from the zod schema (run it after changing schema.ts)", () => {
    assert.deepEqual(committed, buildJsonSchema());
  });

  it("has $schema, $id, title and a description on every field", () => {
    assert.equal(committed.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.equal(committed.$id, SCHEMA_ID);
    assert.equal(typeof committed.title, "string");
    const env = committed.properties.environments.items.properties;
    const undocumented = Object.keys(env).filter((k) => typeof env[k].description !== "string");
    assert.deepEqual(undocumented, []);
  });

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(committed);

  for (const name of ["basic.yml", "full.yml", "anchors.yml"]) {
    it(`accepts ${name} as written (input side: "5s" strings, omitted defaults)`, () => {
      assert.ok(validate(fixture(name)), JSON.stringify(validate.errors, null, 2));
    });
  }

  const rejected: Array<[string, unknown]> = [
    [
      "an unknown field",
      {
        environments: [{ name: "dev", source: { path: "." }, destination: { namespace: "d" }, replicas: 1 }],
      },
    ],
    [
      "a bad sync option",
      {
        environments: [
          {
            name: "dev",
            source: { path: "." },
            destination: { namespace: "d" },
            syncPolicy: { syncOptions: ["Prune=true"] },
          },
        ],
      },
    ],
    [
      "a duration without a unit",
      {
        environments: [
          { name: "dev", source: { path: "." }, destination: { namespace: "d" }, pollInterval: "5" },
        ],
      },
    ],
    ["a missing namespace", { environments: [{ name: "dev", source: { path: "." }, destination: {} }] }],
  ];
  for (const [name, data] of rejected) {
    it(`rejects ${name}, like the parser`, () => assert.equal(validate(data), false));
  }
});
