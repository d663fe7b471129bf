// docs/configuration.md is generated from the zod schemas: a field added, renamed or given another
// default without regenerating it fails here, with the command that fixes it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  allFieldPaths,
  REFERENCE_PATH,
  REGENERATE,
  renderConfigReference,
} from "../../../tools/config-reference.ts";
import { ARGO_EQUIVALENTS } from "../../../tools/config-reference-argo.ts";

describe("the configuration reference", () => {
  it("is what the schema generates now", () => {
    const committed = readFileSync(REFERENCE_PATH, "utf8");
    assert.ok(
      committed === renderConfigReference(),
      `docs/configuration.md differs from what the schemas generate: run ${REGENERATE} and commit it`,
    );
  });

  it("lists every field of the config and of the projects, each once", () => {
    const text = renderConfigReference();
    const paths = allFieldPaths();
    for (const field of [
      "environments",
      "syncPolicy",
      "prune",
      "selfHeal",
      "approval",
      "floors",
      "serviceAccount",
    ]) {
      assert.match(text, new RegExp(`- \\*\\*\`${field}\`\\*\\*`), `${field} is missing`);
    }
    assert.equal(new Set(paths).size, paths.length, "a field path is listed twice");
    assert.ok(paths.includes("environments[].syncPolicy.automated.prune"));
    assert.ok(paths.includes("projects.yaml:projects[].destinations[].serviceAccount"));
  });

  it("shows defaults and Argo CD equivalents", () => {
    const text = renderConfigReference();
    assert.match(
      text,
      /\*\*`limit`\*\*: integer[^\n]*default `5`; Argo CD: `Application` `spec\.syncPolicy\.retry\.limit`/,
    );
    assert.match(text, /\*\*`branch`\*\*: string; default `"main"`/);
  });

  it("maps Argo CD equivalents only for fields that exist", () => {
    const known = new Set(allFieldPaths());
    const stale = Object.keys(ARGO_EQUIVALENTS).filter((path) => !known.has(path));
    assert.deepEqual(stale, [], "tools/config-reference-argo.ts names fields the schemas do not have");
  });
});
