import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseQuantity, quantitiesEqual } from "../../../src/engine/diff/index.ts";

describe("quantities", () => {
  const equal: Array<[unknown, unknown]> = [
    ["0.5", "500m"],
    ["1Gi", "1024Mi"],
    [1, "1"],
    [0.25, "250m"],
    ["1e3", "1k"],
    ["1E-3", "1m"],
    ["129e6", "129M"],
    ["1.5Gi", "1536Mi"],
    ["100u", "0.1m"],
    ["+2", "2"],
    ["0", "0m"],
    [".5", "500m"],
  ];
  for (const [a, b] of equal)
    it(`${JSON.stringify(a)} == ${JSON.stringify(b)}`, () => assert.ok(quantitiesEqual(a, b)));

  const different: Array<[unknown, unknown]> = [
    ["1Gi", "1G"],
    ["100m", "0.01"],
    ["1", "1m"],
    ["1Ki", "1k"],
    ["-1", "1"],
  ];
  for (const [a, b] of different)
    it(`${JSON.stringify(a)} != ${JSON.stringify(b)}`, () => assert.ok(!quantitiesEqual(a, b)));

  for (const bad of ["", "abc", "1 Gi", "1GiB", "1.2.3", "Gi", true, null, {}, Number.NaN, "1e"]) {
    it(`not a quantity: ${JSON.stringify(bad)}`, () => {
      assert.equal(parseQuantity(bad), undefined);
      assert.equal(quantitiesEqual(bad, bad), false);
    });
  }
});
