import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SyncWindow } from "../../src/config/types.ts";
import { evaluateWindows, isWindowActive, selfHealHeldBy } from "../../src/reconciler/sync-windows.ts";

const H = 3_600_000;
const M = 60_000;
const allow = (schedule: string, duration: number, more: Partial<SyncWindow> = {}): SyncWindow => ({
  kind: "allow",
  schedule,
  duration,
  timeZone: "UTC",
  manualSync: false,
  ...more,
});
const deny = (schedule: string, duration: number, more: Partial<SyncWindow> = {}): SyncWindow => ({
  ...allow(schedule, duration, more),
  kind: "deny",
});

interface Case {
  name: string;
  windows: SyncWindow[];
  /** ISO instant. */
  now: string;
  manual?: boolean;
  allowed: boolean;
  /** ISO instant, or undefined when none is expected. */
  nextOpen?: string;
  reason?: RegExp;
}

// Calendar: 2024-07-01 and 2024-01-15 are Mondays; 2024-07-05 and 2024-01-12 are Fridays.
const weekdaysBerlin = allow("0 9 * * 1-5", 8 * H, { timeZone: "Europe/Berlin" });

const cases: Case[] = [
  {
    name: "no windows: always allowed",
    windows: [],
    now: "2024-07-01T03:00:00Z",
    allowed: true,
    reason: /no sync windows/,
  },

  // Time zones (Europe/Berlin is UTC+2 in July, UTC+1 in January; Tokyo is UTC+9 all year)
  {
    name: "inside a Berlin weekday window in summer (09:30 CEST)",
    windows: [weekdaysBerlin],
    now: "2024-07-01T07:30:00Z",
    allowed: true,
    reason: /^inside allow window #0 "0 9 \* \* 1-5" for 8h \(Europe\/Berlin\)$/,
  },
  {
    name: "before a Berlin weekday window in summer (08:30 CEST)",
    windows: [weekdaysBerlin],
    now: "2024-07-01T06:30:00Z",
    allowed: false,
    nextOpen: "2024-07-01T07:00:00Z",
    reason: /^outside allow window #0 .*; next allowed at 2024-07-01T07:00:00\.000Z$/,
  },
  {
    name: "before the same window in winter (08:30 CET): the zone's offset at that instant applies",
    windows: [weekdaysBerlin],
    now: "2024-01-15T07:30:00Z",
    allowed: false,
    nextOpen: "2024-01-15T08:00:00Z",
  },
  {
    name: "inside the same window in winter (09:30 CET)",
    windows: [weekdaysBerlin],
    now: "2024-01-15T08:30:00Z",
    allowed: true,
  },
  {
    name: "after the window on Friday (17:30 CEST): next opening is Monday",
    windows: [weekdaysBerlin],
    now: "2024-07-05T15:30:00Z",
    allowed: false,
    nextOpen: "2024-07-08T07:00:00Z",
  },
  {
    name: "Tokyo window at its first instant (09:00 JST) is active",
    windows: [allow("0 9 * * *", H, { timeZone: "Asia/Tokyo" })],
    now: "2024-03-10T00:00:00Z",
    allowed: true,
  },
  {
    name: "Tokyo window at its end instant (10:00 JST) is over",
    windows: [allow("0 9 * * *", H, { timeZone: "Asia/Tokyo" })],
    now: "2024-03-10T01:00:00Z",
    allowed: false,
    nextOpen: "2024-03-11T00:00:00Z",
  },
  {
    name: "New York weekend freeze (Fri 17:00 EST for 64h), on Saturday",
    windows: [deny("0 17 * * 5", 64 * H, { timeZone: "America/New_York" })],
    now: "2024-01-13T15:00:00Z",
    allowed: false,
    nextOpen: "2024-01-15T14:00:00Z",
    reason: /^blocked by deny window #0 "0 17 \* \* 5" for 64h \(America\/New_York\)/,
  },
  {
    name: "New York weekend freeze, on Thursday",
    windows: [deny("0 17 * * 5", 64 * H, { timeZone: "America/New_York" })],
    now: "2024-01-11T15:00:00Z",
    allowed: true,
    reason: /^no deny window is active$/,
  },

  // Deny wins
  {
    name: "an active deny wins over an active allow",
    windows: [allow("0 0 * * *", 24 * H), deny("0 12 * * *", H)],
    now: "2024-07-01T12:30:00Z",
    allowed: false,
    nextOpen: "2024-07-01T13:00:00Z",
  },
  {
    name: "a deny inside an allow window, then the rest of the allow window",
    windows: [allow("0 9 * * 1-5", 8 * H), deny("0 12 * * *", 2 * H)],
    now: "2024-07-01T12:30:00Z",
    allowed: false,
    nextOpen: "2024-07-01T14:00:00Z",
  },
  {
    name: "a deny spanning the next allow windows pushes the opening past it",
    windows: [deny("0 0 * * 1", 48 * H), allow("0 9 * * *", 8 * H)],
    now: "2024-07-01T10:00:00Z",
    allowed: false,
    nextOpen: "2024-07-03T09:00:00Z",
  },

  // manualSync
  {
    name: "manual sync during a deny window with manualSync",
    windows: [deny("0 12 * * *", H, { manualSync: true })],
    now: "2024-07-01T12:30:00Z",
    manual: true,
    allowed: true,
    reason: /^manual sync allowed during deny window #0 .*\(manualSync\)$/,
  },
  {
    name: "automated sync during the same deny window",
    windows: [deny("0 12 * * *", H, { manualSync: true })],
    now: "2024-07-01T12:30:00Z",
    allowed: false,
    nextOpen: "2024-07-01T13:00:00Z",
  },
  {
    name: "manual sync blocked when one of two active deny windows lacks manualSync (Argo CD: every one must have it)",
    windows: [deny("0 12 * * *", 2 * H, { manualSync: true }), deny("30 12 * * *", H)],
    now: "2024-07-01T12:45:00Z",
    manual: true,
    allowed: false,
    nextOpen: "2024-07-01T13:30:00Z",
    reason: /^blocked by deny windows #0 .*, #1 .*\(manualSync is not set on every active deny window\)/,
  },
  {
    name: "manual sync outside allow windows that all have manualSync",
    windows: [allow("0 9 * * *", H, { manualSync: true })],
    now: "2024-07-01T12:00:00Z",
    manual: true,
    allowed: true,
    reason: /^manual sync allowed outside allow window #0/,
  },
  {
    name: "automated sync outside the same allow window",
    windows: [allow("0 9 * * *", H, { manualSync: true })],
    now: "2024-07-01T12:00:00Z",
    allowed: false,
    nextOpen: "2024-07-02T09:00:00Z",
  },
  {
    name: "manual sync outside allow windows when one lacks manualSync",
    windows: [allow("0 9 * * *", H, { manualSync: true }), allow("0 15 * * *", H)],
    now: "2024-07-01T12:00:00Z",
    manual: true,
    allowed: false,
    nextOpen: "2024-07-01T15:00:00Z",
  },
  {
    name: "manual sync after a deny ends, outside allow windows with manualSync",
    windows: [allow("0 9 * * *", 8 * H, { manualSync: true }), deny("0 20 * * *", 2 * H)],
    now: "2024-07-01T21:00:00Z",
    manual: true,
    allowed: false,
    nextOpen: "2024-07-01T22:00:00Z",
  },

  // Several allow windows: one active is enough (an older Argo CD refused when any was inactive)
  {
    name: "one of two allow windows active",
    windows: [allow("0 9 * * *", H), allow("0 12 * * *", H)],
    now: "2024-07-01T12:15:00Z",
    allowed: true,
    reason: /^inside allow window #1 /,
  },

  // Never opens
  {
    name: "a deny window that never closes: no nextOpen, bounded search",
    windows: [deny("* * * * *", M)],
    now: "2024-07-01T12:00:00Z",
    allowed: false,
    reason: /; no opening found before \d{4}-/,
  },
];

describe("evaluateWindows", () => {
  for (const c of cases) {
    it(c.name, () => {
      const decision = evaluateWindows(c.windows, new Date(c.now), c.manual ?? false);
      assert.equal(decision.allowed, c.allowed, decision.reason);
      assert.equal(
        decision.nextOpen?.toISOString(),
        c.nextOpen === undefined ? undefined : new Date(c.nextOpen).toISOString(),
      );
      if (c.reason) assert.match(decision.reason, c.reason);
      if (decision.nextOpen) {
        // nextOpen really is open, and the instant just before it is not.
        assert.equal(evaluateWindows(c.windows, decision.nextOpen, c.manual ?? false).allowed, true);
        assert.equal(
          evaluateWindows(c.windows, new Date(decision.nextOpen.getTime() - 1), c.manual ?? false).allowed,
          false,
        );
      }
    });
  }

  it("answers quickly even when nothing ever opens", () => {
    const started = performance.now();
    evaluateWindows(
      [deny("* * * * *", M), allow("*/5 * * * *", 2 * M)],
      new Date("2024-07-01T12:00:00Z"),
      false,
    );
    assert.ok(performance.now() - started < 1_500);
  });
});

describe("isWindowActive", () => {
  const window = allow("0 9 * * 1-5", 8 * H, { timeZone: "Europe/Berlin" });
  const table: Array<[string, boolean]> = [
    ["2024-07-01T06:59:59Z", false],
    ["2024-07-01T07:00:00Z", true], // start instant
    ["2024-07-01T14:59:59Z", true],
    ["2024-07-01T15:00:00Z", false], // end instant
    ["2024-07-06T08:00:00Z", false], // Saturday
  ];
  for (const [now, active] of table) {
    it(`${now}: ${active ? "active" : "inactive"}`, () =>
      assert.equal(isWindowActive(window, new Date(now)), active));
  }
});

describe("selfHealHeldBy", () => {
  // Saturday 2026-12-05 12:00 UTC, inside a weekend freeze (Saturday 00:00, 48h).
  const saturday = new Date("2026-12-05T12:00:00Z");
  it("lets self-heal continue inside a deny window by default: a change freeze is not a remediation freeze", () => {
    assert.equal(selfHealHeldBy([deny("0 0 * * 6", 48 * H)], saturday), undefined);
    assert.equal(evaluateWindows([deny("0 0 * * 6", 48 * H)], saturday, false).allowed, false);
  });
  it("holds self-heal inside a deny window that sets selfHeal: false, and only while it is active", () => {
    const strict = [deny("0 0 * * 6", 48 * H, { selfHeal: false })];
    assert.match(selfHealHeldBy(strict, saturday) ?? "", /sets selfHeal: false/);
    assert.equal(selfHealHeldBy(strict, new Date("2026-12-07T12:00:00Z")), undefined);
  });
});
