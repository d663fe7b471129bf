import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HEALTH_ORDER, worstHealth } from "../../../src/engine/health/index.ts";
import type { Health, HealthStatus } from "../../../src/engine/result.ts";

describe("worstHealth", () => {
  test("follows Healthy < Suspended < Progressing < Missing < Degraded < Unknown", () => {
    assert.deepEqual(HEALTH_ORDER, ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"]);
    for (const [i, a] of HEALTH_ORDER.entries()) {
      for (const [j, b] of HEALTH_ORDER.entries()) {
        const worse: HealthStatus = i >= j ? a : b;
        assert.equal(worstHealth([{ status: a }, { status: b }])?.status, worse, `${a} vs ${b}`);
      }
    }
  });

  const cases: Array<{ name: string; list: Array<Health | undefined>; want: Health | undefined }> = [
    { name: "empty list", list: [], want: undefined },
    { name: "only kinds without health", list: [undefined, undefined], want: undefined },
    {
      name: "ignores objects without health",
      list: [undefined, { status: "Progressing", message: "rolling" }, undefined],
      want: { status: "Progressing", message: "rolling" },
    },
    {
      name: "keeps the message of the worst",
      list: [
        { status: "Healthy" },
        { status: "Degraded", message: "CrashLoopBackOff" },
        { status: "Missing" },
        { status: "Suspended", message: "paused" },
      ],
      want: { status: "Degraded", message: "CrashLoopBackOff" },
    },
    {
      name: "first of equals wins",
      list: [
        { status: "Progressing", message: "first" },
        { status: "Progressing", message: "second" },
      ],
      want: { status: "Progressing", message: "first" },
    },
    {
      name: "Unknown is worse than Degraded",
      list: [
        { status: "Degraded", message: "bad" },
        { status: "Unknown", message: "cannot tell" },
      ],
      want: { status: "Unknown", message: "cannot tell" },
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(worstHealth(c.list), c.want));
  }
});
