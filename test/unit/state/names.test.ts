import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { leaseNameFor, microTime, parseMicroTime } from "../../../src/state/lease.ts";
import { stateConfigMapName } from "../../../src/state/store.ts";

// A DNS-1123 subdomain made of one label, as ConfigMap and Lease names must be.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe("state object names", () => {
  const instances = [
    "payments-config.dev",
    "payments-config-dev",
    "Payments_Config.DEV",
    "a",
    "...",
    "",
    "日本.prod",
    `${"very-long-repository-name".repeat(10)}.staging`,
  ];

  for (const instance of instances) {
    it(`derives valid names for ${JSON.stringify(instance)}`, () => {
      for (const name of [stateConfigMapName(instance), leaseNameFor(instance)]) {
        assert.match(name, DNS_LABEL);
        assert.ok(name.length <= 63, `${name} is longer than 63 characters`);
      }
    });
  }

  it("keeps instances apart that sanitize alike", () => {
    const names = new Set(instances.map(stateConfigMapName));
    assert.equal(names.size, instances.length);
    assert.equal(new Set(instances.map(leaseNameFor)).size, instances.length);
  });

  it("is stable and readable", () => {
    assert.match(
      stateConfigMapName("payments-config.dev"),
      /^syncward-state-payments-config-dev-[0-9a-f]{10}$/,
    );
    assert.equal(stateConfigMapName("payments-config.dev"), stateConfigMapName("payments-config.dev"));
    assert.match(leaseNameFor("payments-config.dev"), /^syncward-payments-config-dev-[0-9a-f]{10}$/);
  });

  it("never collides with the leader lease", () => {
    assert.notEqual(leaseNameFor("leader"), "syncward-leader");
  });
});

describe("MicroTime", () => {
  it("formats with six fractional digits in UTC", () => {
    assert.equal(microTime(Date.UTC(2026, 10, 29, 18, 20, 0, 123)), "2026-11-29T18:20:00.123000Z");
    assert.equal(microTime(Date.UTC(2026, 10, 29, 18, 20, 0, 123) + 0.456), "2026-11-29T18:20:00.123456Z");
    assert.match(microTime(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it("parses what the API server writes", () => {
    const at = Date.UTC(2026, 10, 29, 18, 20, 0, 123);
    assert.equal(Math.round(parseMicroTime("2026-11-29T18:20:00.123456Z") * 1000), at * 1000 + 456);
    assert.equal(parseMicroTime("2026-11-29T18:20:00Z"), Date.UTC(2026, 10, 29, 18, 20, 0));
    assert.equal(parseMicroTime("2026-11-29T19:20:00.5+01:00"), Date.UTC(2026, 10, 29, 18, 20, 0, 500));
    assert.ok(Number.isNaN(parseMicroTime(undefined)));
    assert.ok(Number.isNaN(parseMicroTime(null)));
    assert.ok(Number.isNaN(parseMicroTime("yesterday")));
  });

  it("round-trips", () => {
    const now = Date.now();
    assert.equal(parseMicroTime(microTime(now)), now);
  });
});
