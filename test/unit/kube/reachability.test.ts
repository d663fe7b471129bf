// One outage per cluster: from the first request that got no answer to the next answer.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Reachability } from "../../../src/kube/reachability.ts";

describe("Reachability", () => {
  it("keeps the first failure's time and message for the whole outage, and tells each change once", () => {
    const r = new Reachability();
    const seen: Array<number | undefined> = [];
    r.onChange((o) => seen.push(o?.since));
    assert.equal(r.current, undefined);
    r.answered();
    r.failed("refused", 1000);
    r.failed("timed out", 2000);
    assert.deepEqual(r.current, { since: 1000, error: "refused" });
    r.answered();
    r.answered();
    assert.equal(r.current, undefined);
    r.failed("reset", 3000);
    assert.deepEqual(seen, [1000, undefined, 3000]);
  });

  it("stops telling a listener that unsubscribed", () => {
    const r = new Reachability();
    let calls = 0;
    const off = r.onChange(() => calls++);
    r.failed("x");
    off();
    r.answered();
    assert.equal(calls, 1);
  });
});
