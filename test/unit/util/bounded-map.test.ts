import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedMap } from "../../../src/util/bounded-map.ts";

describe("BoundedMap", () => {
  it("holds at most its capacity, forgetting the oldest first", () => {
    const m = new BoundedMap<string, number>(3);
    for (const [i, k] of ["a", "b", "c", "d", "e"].entries()) m.set(k, i);
    assert.deepEqual([...m.keys()], ["c", "d", "e"]);
    assert.equal(m.get("a"), undefined);
  });

  it("setting a key again makes it the newest, so it outlives keys set after it first", () => {
    const m = new BoundedMap<string, number>(2);
    m.set("a", 1).set("b", 2).set("a", 3).set("c", 4);
    assert.deepEqual(
      [...m.entries()],
      [
        ["a", 3],
        ["c", 4],
      ],
    );
  });
});
