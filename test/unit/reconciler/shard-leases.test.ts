// readLeases: what a replica concludes from the Leases it watches: who is a live member, who holds
// each app, and when the next lease held by someone else runs out if nobody renews it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MEMBER_LABEL, readLeases } from "../../../src/reconciler/shard.ts";
import { microTime } from "../../../src/state/lease.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");

function lease(name: string, holder: string, renewedAgoMs: number, member = false, duration = 15) {
  const labels: Record<string, string> = member ? { [MEMBER_LABEL]: "true" } : {};
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, resourceVersion: "1", labels },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: duration,
      renewTime: microTime(NOW - renewedAgoMs),
    },
  };
}

const read = (items: ReturnType<typeof lease>[], seenAgoMs: number) =>
  readLeases({
    items,
    appLeases: new Map([
      ["lease-a", "a"],
      ["lease-b", "b"],
      ["lease-c", "c"],
    ]),
    self: "r1",
    firstSeen: () => NOW - seenAgoMs,
    now: NOW,
    defaultDurationSeconds: 15,
  });

describe("readLeases", () => {
  it("live members and holders; released and expired leases count for nobody", () => {
    const r = read(
      [
        lease("m1", "r1", 1000, true),
        lease("m2", "r2", 2000, true),
        lease("m3", "", 0, true),
        lease("lease-a", "r1", 1000),
        lease("lease-b", "r2", 20_000),
        lease("lease-c", "", 0),
        lease("other-app", "r2", 1000),
      ],
      16_000,
    );
    assert.deepEqual(r.members, ["r1", "r2"]);
    assert.deepEqual([...r.holders], [["a", "r1"]], "b's holder stopped renewing 20 s ago; c was released");
  });

  it("a lease renewed long ago by its holder's clock but seen only just now is still live (clock skew)", () => {
    const r = read([lease("m2", "r2", 60_000, true), lease("lease-b", "r2", 60_000)], 1000);
    assert.deepEqual(r.members, ["r2"]);
    assert.deepEqual([...r.holders], [["b", "r2"]]);
    assert.equal(r.nextExpiry, NOW - 1000 + 15_000, "expires a lease duration after we first saw it");
  });

  it("the next expiry is the earliest of others' leases, by the later of both clocks; our own do not count", () => {
    const r = read(
      [lease("lease-a", "r1", 0), lease("lease-b", "r2", 3000), lease("m2", "r2", 1000, true)],
      2000,
    );
    // lease-b: seen 2 s ago (+15 s) vs renewed 3 s ago (+15 s): the later, 13 s from now.
    assert.equal(r.nextExpiry, NOW + 13_000);
    assert.equal(read([lease("lease-a", "r1", 0)], 0).nextExpiry, Number.POSITIVE_INFINITY);
  });
});
