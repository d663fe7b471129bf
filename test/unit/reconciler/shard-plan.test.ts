// The balance rules of shard-plan.ts: the fair share, what is free, which apps go first, and, run
// as a whole fleet round after round, that start, join, death and leave all settle within
// ceil(apps / replicas) + 1 with no app held twice and no thrash once settled.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fairShare, planShard, preferred, type ShardApp } from "../../../src/reconciler/shard-plan.ts";

const apps = (n: number, holder?: (i: number) => string | undefined): ShardApp[] =>
  Array.from({ length: n }, (_, i) => ({ app: `app-${String(i).padStart(2, "0")}`, holder: holder?.(i) }));

describe("fairShare", () => {
  for (const [a, m, share] of [
    [0, 3, 0],
    [1, 3, 1],
    [30, 3, 10],
    [31, 3, 11],
    [30, 4, 8],
    [5, 0, 5],
  ] as const) {
    it(`${a} apps over ${m} members: ${share} each at most`, () => assert.equal(fairShare(a, m), share));
  }
});

describe("planShard", () => {
  const cases: Array<{
    name: string;
    self: string;
    members: string[];
    apps: ShardApp[];
    take?: number;
    release?: number;
    share: number;
  }> = [
    {
      name: "alone, nothing held: takes everything",
      self: "a",
      members: ["a"],
      apps: apps(6),
      share: 6,
      take: 6,
    },
    {
      name: "not yet listed as a member itself: still counts itself",
      self: "a",
      members: ["b"],
      apps: apps(6),
      share: 3,
      take: 3,
    },
    {
      name: "three members, nothing held: takes its share only",
      self: "a",
      members: ["a", "b", "c"],
      apps: apps(30),
      share: 10,
      take: 10,
    },
    {
      name: "at its share: takes nothing more even with free apps",
      self: "a",
      members: ["a", "b", "c"],
      apps: apps(30, (i) => (i < 10 ? "a" : undefined)),
      share: 10,
    },
    {
      name: "a member joined: hands back down to the new share",
      self: "a",
      members: ["a", "b", "c"],
      apps: apps(30, (i) => (i < 15 ? "a" : "b")),
      share: 10,
      release: 5,
    },
    {
      name: "a member died (its leases expired, so free): the survivors' share grows and they take",
      self: "a",
      members: ["a", "b"],
      apps: apps(30, (i) => (i < 10 ? "a" : i < 20 ? "b" : undefined)),
      share: 15,
      take: 5,
    },
    {
      name: "apps held by a replica that is not a member (an older version) are not free",
      self: "a",
      members: ["a"],
      apps: apps(4, () => "old-replica"),
      share: 4,
    },
    { name: "no apps: nothing to do", self: "a", members: ["a", "b"], apps: [], share: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planShard({ self: c.self, members: c.members, apps: c.apps });
      assert.equal(plan.share, c.share);
      assert.equal(plan.take.length, c.take ?? 0);
      assert.equal(plan.release.length, c.release ?? 0);
      const free = new Set(c.apps.filter((a) => a.holder === undefined).map((a) => a.app));
      for (const t of plan.take) assert.ok(free.has(t), `${t} is free`);
      const mine = new Set(c.apps.filter((a) => a.holder === c.self).map((a) => a.app));
      for (const r of plan.release) assert.ok(mine.has(r), `${r} is held by ${c.self}`);
    });
  }

  it("takes first the free apps it is preferred for, and releases first those others are preferred for", () => {
    const members = ["a", "b", "c"];
    const all = apps(30);
    const plan = planShard({ self: "a", members, apps: all.map((x) => ({ ...x })) });
    const preferredHere = all.filter((x) => preferred(x.app, members) === "a").map((x) => x.app);
    assert.ok(preferredHere.length > 0 && preferredHere.length <= 10);
    assert.deepEqual(plan.take.slice(0, preferredHere.length).sort(), preferredHere.sort());

    const held = planShard({ self: "a", members, apps: apps(30, (i) => (i < 20 ? "a" : "b")) });
    assert.equal(held.release.length, 10);
    const elsewhere = apps(20)
      .filter((x) => preferred(x.app, members) !== "a")
      .map((x) => x.app);
    const releasedElsewhere = held.release.filter((x) => elsewhere.includes(x));
    // Apps preferred elsewhere go first: all of them when they are fewer than the surplus.
    assert.equal(releasedElsewhere.length, Math.min(10, elsewhere.length));
    assert.deepEqual(held.release.slice(0, releasedElsewhere.length), releasedElsewhere);
  });

  it("is deterministic: the same view gives the same plan, whatever the order of members and apps", () => {
    const view = { self: "b", members: ["c", "a", "b"], apps: apps(12) };
    const again = { self: "b", members: ["a", "b", "c"], apps: [...apps(12)].reverse() };
    assert.deepEqual(planShard(view).take.sort(), planShard(again).take.sort());
  });
});

/**
 * A fleet of replicas running rounds in turn against shared leases, as the shard does against the
 * API server: each round a replica plans from what it sees and then takes (only free apps: the
 * lease) and releases. Returns the holders after `rounds` rounds and how many moves happened.
 */
function simulate(
  holders: Map<string, string | undefined>,
  members: string[],
  rounds: number,
): { moves: number; perMember: Map<string, number> } {
  let moves = 0;
  for (let round = 0; round < rounds; round++) {
    for (const self of members) {
      const view = [...holders].map(([app, holder]) => ({ app, holder }));
      const plan = planShard({ self, members, apps: view });
      for (const app of plan.release) {
        holders.set(app, undefined);
        moves++;
      }
      for (const app of plan.take) {
        if (holders.get(app) !== undefined) continue; // another replica's lease write won
        holders.set(app, self);
        moves++;
      }
    }
  }
  const perMember = new Map(members.map((m) => [m, 0]));
  for (const h of holders.values()) if (h !== undefined) perMember.set(h, (perMember.get(h) ?? 0) + 1);
  return { moves, perMember };
}

function assertBalanced(
  holders: Map<string, string | undefined>,
  perMember: Map<string, number>,
  members: string[],
) {
  const bound = Math.ceil(holders.size / members.length) + 1;
  assert.ok(
    [...holders.values()].every((h) => h !== undefined && members.includes(h)),
    "every app held by a member",
  );
  for (const [m, n] of perMember) assert.ok(n <= bound, `${m} holds ${n} > ${bound}`);
}

describe("a fleet of replicas following the plans", () => {
  it("3 replicas started at once share 30 apps within the bound, then stay put", () => {
    const holders = new Map(apps(30).map((a) => [a.app, undefined as string | undefined]));
    const members = ["r1", "r2", "r3"];
    const first = simulate(holders, members, 3);
    assertBalanced(holders, first.perMember, members);
    assert.deepEqual([...first.perMember.values()], [10, 10, 10]);
    assert.equal(simulate(holders, members, 5).moves, 0, "no thrash once settled");
  });

  it("one replica first, then two join: it hands back apps until all are within the bound", () => {
    const holders = new Map(apps(30).map((a) => [a.app, undefined as string | undefined]));
    simulate(holders, ["r1"], 1);
    assert.ok([...holders.values()].every((h) => h === "r1"));
    const members = ["r1", "r2", "r3"];
    const after = simulate(holders, members, 3);
    assertBalanced(holders, after.perMember, members);
    assert.equal(after.moves, 40, "20 released by r1, 20 taken by the newcomers; nothing else moved");
  });

  it("a replica dies: its apps (leases expired, so free) go to the survivors, nothing else moves", () => {
    const holders = new Map(apps(30).map((a) => [a.app, undefined as string | undefined]));
    simulate(holders, ["r1", "r2", "r3"], 3);
    const before = new Map(holders);
    for (const [app, h] of holders) if (h === "r2") holders.set(app, undefined);
    const survivors = ["r1", "r3"];
    const after = simulate(holders, survivors, 2);
    assertBalanced(holders, after.perMember, survivors);
    for (const [app, h] of before)
      if (h !== "r2") assert.equal(holders.get(app), h, `${app} stayed with ${h}`);
  });

  for (const [a, n] of [
    [7, 3],
    [31, 4],
    [100, 7],
    [2, 5],
  ] as const) {
    it(`${a} apps over ${n} replicas settle within ceil(${a}/${n})+1`, () => {
      const holders = new Map(apps(a).map((x) => [x.app, undefined as string | undefined]));
      const members = Array.from({ length: n }, (_, i) => `r${i}`);
      const { perMember } = simulate(holders, members, 3);
      assertBalanced(holders, perMember, members);
      assert.equal(simulate(holders, members, 3).moves, 0);
    });
  }
});
