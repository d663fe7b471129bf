import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatProblem, SourceError, type SourceProblem } from "../../../src/source/errors.ts";

describe("SourceError", () => {
  const cases: Array<{ problem: SourceProblem; text: string }> = [
    {
      problem: { file: "overlays/dev/deploy.yaml", line: 12, message: "bad" },
      text: "overlays/dev/deploy.yaml:12: bad",
    },
    {
      problem: { file: "overlays/dev/kustomization.yaml", message: "bad" },
      text: "overlays/dev/kustomization.yaml: bad",
    },
    { problem: { message: "revision 'x' not found in /repo" }, text: "revision 'x' not found in /repo" },
  ];
  for (const { problem, text } of cases) {
    it(`formats ${text}`, () => assert.equal(formatProblem(problem), text));
  }

  it("lists every problem, one per line, and carries the first one's file and line", () => {
    const err = new SourceError([
      { file: "a.yaml", line: 3, message: "document is missing kind" },
      { file: "b.yaml", line: 7, message: "invalid YAML: oops" },
    ]);
    assert.ok(err instanceof Error);
    assert.equal(err.name, "SourceError");
    assert.equal(err.message, "a.yaml:3: document is missing kind\nb.yaml:7: invalid YAML: oops");
    assert.equal(err.file, "a.yaml");
    assert.equal(err.line, 3);
    assert.equal(err.problems.length, 2);
  });

  it("takes a single message", () => {
    const err = new SourceError("revision 'nope' not found in /repo");
    assert.deepEqual(err.problems, [{ message: "revision 'nope' not found in /repo" }]);
    assert.equal(err.file, undefined);
    assert.equal(err.line, undefined);
  });

  it("needs at least one problem", () => {
    assert.throws(() => new SourceError([]), TypeError);
  });
});
