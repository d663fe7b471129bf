import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Cached } from "../../../src/util/cached.ts";

describe("Cached", () => {
  it("computes once within its lifetime, again after it, and never keeps a failure", async () => {
    let now = 0;
    let calls = 0;
    let fail = true;
    const cached = new Cached(
      1_000,
      async () => {
        calls++;
        if (fail) throw new Error("discovery down");
        return calls;
      },
      () => now,
    );
    await assert.rejects(cached.get(), /discovery down/);
    fail = false;
    assert.equal(await cached.get(), 2, "a failure is not kept");
    now = 900;
    assert.equal(await cached.get(), 2, "kept within its lifetime");
    now = 2_000;
    assert.equal(await cached.get(), 3, "computed again after it");
  });
});
