// Preview records as stored text: records from before the destination was kept still read (their
// teardown then looks the destination up), a kept destination reads back as written (`{}`:
// syncward's own cluster), and a destination that is not one is dropped rather than trusted.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parsePreviewRecord } from "../../../src/state/preview-store.ts";

const base = {
  key: "acme/shop#7:dev",
  repository: { owner: "acme", repo: "shop", id: 1 },
  installation: 2,
  pull: 7,
  from: "dev",
  namespace: "shop-pr-7",
  head: { branch: "feature", sha: "a".repeat(40) },
  phase: "tearingDown",
  requestedAt: "2026-01-01T00:00:00Z",
  lastMovedAt: "2026-01-01T00:00:00Z",
  attempts: 0,
};

describe("parsePreviewRecord", () => {
  const cases: Array<[string, unknown, unknown]> = [
    ["an old record (no destination)", base, base],
    ["syncward's own cluster", { ...base, destination: {} }, { ...base, destination: {} }],
    [
      "a named cluster",
      { ...base, destination: { cluster: "previews" } },
      { ...base, destination: { cluster: "previews" } },
    ],
    [
      "a context, in-cluster and nothing else kept",
      { ...base, destination: { context: "kind", inCluster: true, namespace: "x", server: "https://evil" } },
      { ...base, destination: { context: "kind", inCluster: true } },
    ],
    [
      "fields of the wrong type dropped",
      { ...base, destination: { cluster: 3, context: "", inCluster: "yes" } },
      { ...base, destination: {} },
    ],
    ["a destination that is no object: as an old record", { ...base, destination: "previews" }, base],
    ["a destination that is a list: as an old record", { ...base, destination: ["previews"] }, base],
    [
      "the reason a teardown began kept",
      { ...base, stopping: "the pull request closed" },
      { ...base, stopping: "the pull request closed" },
    ],
  ];
  for (const [name, stored, expected] of cases)
    it(name, () => assert.deepEqual(parsePreviewRecord(JSON.stringify(stored)), expected));

  it("is undefined for what is no record", () => {
    for (const text of [
      "",
      "{",
      "null",
      "[]",
      '"x"',
      JSON.stringify({ ...base, key: 1 }),
      JSON.stringify({ ...base, pull: "7" }),
    ])
      assert.equal(parsePreviewRecord(text), undefined, text);
  });
});
