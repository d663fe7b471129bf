import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { applyFloors, floorsFromEnv } from "../../../src/config/floors.ts";
import {
  driftLoosened,
  guardsOf,
  inheritGuards,
  renderConfigMoved,
  sharedWith,
  stricterApproval,
  stricterRules,
} from "../../../src/config/stricter.ts";
import type { ApprovalRule } from "../../../src/config/types.ts";
import { envConfig } from "../../support/env.ts";

const prod = (fields: Record<string, unknown> = {}) => envConfig("prod", { production: true, ...fields });
const gated = prod({ approval: { users: ["carol", "dave"] } });

describe("the stricter of the deployed and the new rules", () => {
  const rows: Array<
    [string, ReturnType<typeof prod>, ReturnType<typeof prod>, (r: ReturnType<typeof stricterRules>) => void]
  > = [
    ["no change: the new rules, nothing weakened", gated, gated, (r) => assert.deepEqual(r.weakens, [])],
    [
      "approval removed: the old approval still applies",
      gated,
      prod(),
      (r) => {
        assert.deepEqual(r.rules.approval?.users, ["carol", "dave"]);
        assert.match(r.weakens.join(), /approval removed/);
      },
    ],
    [
      "minimum lowered: the higher one",
      prod({ approval: { users: ["carol", "dave"], minimum: 2 } }),
      gated,
      (r) => assert.equal(r.rules.approval?.minimum, 2),
    ],
    [
      "an approver added: only those listed in both count",
      gated,
      prod({ approval: { users: ["carol", "dave", "mallory"] } }),
      (r) => assert.deepEqual(r.rules.approval?.users, ["carol", "dave"]),
    ],
    [
      "allowAuthor turned on: still off",
      gated,
      prod({ approval: { users: ["carol"], allowAuthor: true } }),
      (r) => assert.equal(r.rules.approval?.allowAuthor, false),
    ],
    [
      "command permission lowered: the higher one",
      prod({ commands: { sync: "admin" } }),
      prod({ commands: { sync: "write" } }),
      (r) => assert.equal(r.rules.commands.sync, "admin"),
    ],
    [
      "namespaces widened with no approval anywhere: only the old ones",
      prod({ policy: { namespaces: ["prod"] } }),
      prod({ policy: { namespaces: ["prod", "kube-system"] } }),
      (r) => assert.deepEqual(r.rules.policy.namespaces, ["prod"]),
    ],
    [
      "namespaces widened on a gated environment: taken with the approval",
      prod({ approval: { users: ["carol"] }, policy: { namespaces: ["prod"] } }),
      prod({ approval: { users: ["carol"] }, policy: { namespaces: ["prod", "shared"] } }),
      (r) => {
        assert.deepEqual(r.rules.policy.namespaces, ["prod", "shared"]);
        assert.ok(r.rules.approval);
      },
    ],
    [
      "signatures turned off: still required",
      prod({ policy: { namespaces: ["prod"], requireSignedCommits: true } }),
      prod(),
      (r) => assert.equal(r.rules.policy.requireSignedCommits, true),
    ],
    [
      "a stricter new config applies as it is",
      prod(),
      gated,
      (r) => {
        assert.deepEqual(r.weakens, []);
        assert.deepEqual(r.rules.approval?.users, ["carol", "dave"]);
      },
    ],
  ];
  for (const [name, old, now, check] of rows) it(name, () => check(stricterRules(now, guardsOf(old))));

  // Third round (review A): each change alone loosens, and the result keeps the deployed guard.
  const window = (kind: "allow" | "deny", schedule: string) => ({ kind, schedule, duration: "1h" });
  const loosening: Array<
    [string, ReturnType<typeof prod>, ReturnType<typeof prod>, (r: ReturnType<typeof stricterRules>) => void]
  > = [
    [
      "a trusted bot added: trusted only once deployed",
      gated,
      prod({ approval: { users: ["carol", "dave"], trustedBots: ["acme-release[bot]"] } }),
      (r) => assert.deepEqual(r.rules.approval?.trustedBots, []),
    ],
    [
      "approvers emptied: the old approvers",
      gated,
      prod({ approval: { users: [] } }),
      (r) => assert.deepEqual(r.rules.approval?.users, ["carol", "dave"]),
    ],
    [
      "requireChecks removed: still required",
      prod({ requireChecks: ["ci"] }),
      prod(),
      (r) => assert.deepEqual(r.rules.requireChecks, ["ci"]),
    ],
    [
      "a required check dropped: both lists",
      prod({ requireChecks: ["ci", "e2e"] }),
      prod({ requireChecks: ["ci", "lint"] }),
      (r) => assert.deepEqual(r.rules.requireChecks, ["ci", "e2e", "lint"]),
    ],
    [
      "a required check unpinned from its app: the pinned one stays",
      prod({ requireChecks: [{ name: "ci", app: "github-actions" }] }),
      prod({ requireChecks: ["ci"] }),
      (r) => assert.deepEqual(r.rules.requireChecks, [{ name: "ci", app: "github-actions" }, "ci"]),
    ],
    [
      "the branch's required checks swapped for a list: the branch's",
      prod({ requireChecks: true }),
      prod({ requireChecks: ["ci"] }),
      (r) => assert.equal(r.rules.requireChecks, true),
    ],
    [
      "expiresAfter removed: the old expiry",
      prod({ approval: { users: ["carol"], expiresAfter: "1h" } }),
      prod({ approval: { users: ["carol"] } }),
      (r) => assert.equal(r.rules.approval?.expiresAfter, 3_600_000),
    ],
    [
      "expiresAfter raised: the shorter",
      prod({ approval: { users: ["carol"], expiresAfter: "1h" } }),
      prod({ approval: { users: ["carol"], expiresAfter: "48h" } }),
      (r) => assert.equal(r.rules.approval?.expiresAfter, 3_600_000),
    ],
    [
      "a deny window removed: still denies",
      prod({ syncWindows: [window("deny", "0 22 * * *")] }),
      prod(),
      (r) =>
        assert.deepEqual(
          r.rules.syncWindows.map((w) => `${w.kind} ${w.schedule}`),
          ["deny 0 22 * * *"],
        ),
    ],
    [
      "an allow window added: only the deployed allow windows",
      prod({ syncWindows: [window("allow", "0 9 * * 1-5")] }),
      prod({ syncWindows: [window("allow", "0 9 * * 1-5"), window("allow", "* * * * *")] }),
      (r) =>
        assert.deepEqual(
          r.rules.syncWindows.map((w) => `${w.kind} ${w.schedule}`),
          ["allow 0 9 * * 1-5"],
        ),
    ],
    [
      "every allow window removed: the deployed ones",
      prod({ syncWindows: [window("allow", "0 9 * * 1-5")] }),
      prod(),
      (r) =>
        assert.deepEqual(
          r.rules.syncWindows.map((w) => `${w.kind} ${w.schedule}`),
          ["allow 0 9 * * 1-5"],
        ),
    ],
  ];
  for (const [name, old, now, check] of loosening)
    it(name, () => {
      const r = stricterRules(now, guardsOf(old));
      assert.notDeepEqual(r.weakens, [], "the change is named as loosening");
      check(r);
    });

  it("tightening checks or windows is not loosening", () => {
    assert.deepEqual(
      stricterRules(prod({ requireChecks: ["ci", "e2e"] }), guardsOf(prod({ requireChecks: ["ci"] })))
        .weakens,
      [],
    );
    assert.deepEqual(
      stricterRules(prod({ syncWindows: [window("deny", "0 22 * * *")] }), guardsOf(prod())).weakens,
      [],
    );
    assert.deepEqual(
      stricterRules(prod({ syncWindows: [window("allow", "0 9 * * 1-5")] }), guardsOf(prod())).weakens,
      [],
    );
  });

  it("without deployed rules, the current ones", () =>
    assert.equal(stricterRules(gated, undefined).rules, gated));

  it("approvers in neither list both: the old list, not nobody", () => {
    const a = stricterApproval(
      { users: ["carol"], teams: [], minimum: 1, allowAuthor: false, trustedBots: [] },
      { users: ["mallory"], teams: [], minimum: 1, allowAuthor: false, trustedBots: [] },
    );
    assert.deepEqual(a?.users, ["carol"]);
  });

  it("trusts only the bots both rules trust; rules stored before trustedBots trust none", () => {
    const rule = (trustedBots: string[]) => ({
      users: [],
      teams: [],
      minimum: 1,
      allowAuthor: false,
      trustedBots,
    });
    assert.deepEqual(
      stricterApproval(rule(["dependabot[bot]", "renovate[bot]"]), rule(["Dependabot[bot]"]))?.trustedBots,
      ["Dependabot[bot]"],
    );
    const stored = { users: [], teams: [], minimum: 1, allowAuthor: false } as unknown as ApprovalRule;
    assert.deepEqual(stricterApproval(stored, rule(["dependabot[bot]"]))?.trustedBots, []);
  });
});

describe("what an environment could write of a gated one (third review, B)", () => {
  const prodRules = guardsOf(
    envConfig("prod", { destination: { namespace: "prod" }, approval: { users: ["carol"] } }),
  );
  const tools = (fields: Record<string, unknown> = {}) =>
    envConfig("tools", { destination: { namespace: "tools" }, ...fields });
  it("shares prod's namespace through policy.namespaces, on the same cluster only", () => {
    assert.deepEqual(sharedWith(tools({ policy: { namespaces: ["tools", "prod"] } }), prodRules), [
      "namespace prod",
    ]);
    assert.deepEqual(sharedWith(tools(), prodRules), []);
    assert.deepEqual(
      sharedWith(tools({ destination: { namespace: "prod", context: "other" } }), prodRules),
      [],
    );
  });
  it("inherits prod's approval, keeps its own destination and namespaces", () => {
    const own = tools({ policy: { namespaces: ["tools", "prod"] } });
    const r = inheritGuards({ rules: own, weakens: [] }, "gate.prod", prodRules, ["namespace prod"]);
    assert.deepEqual(r.rules.approval?.users, ["carol"]);
    assert.equal(r.rules.destination.namespace, "tools");
    assert.deepEqual(r.rules.policy.namespaces, ["tools", "prod"]);
    assert.match(r.weakens.join(), /may write namespace prod of gated environment gate\.prod/);
  });
});

describe("operator floors", () => {
  it("raises approvals of production environments only; the stricter source wins", () => {
    const floors = [
      { source: "SYNCWARD_MIN_PRODUCTION_APPROVALS", minProductionApprovals: 1 },
      { source: "project payments", minProductionApprovals: 2 },
    ];
    assert.equal(applyFloors(prod(), floors).approval?.minimum, 2);
    assert.equal(applyFloors(envConfig("dev"), floors).approval, undefined);
    assert.equal(
      applyFloors(prod({ approval: { users: ["carol"], minimum: 3 } }), floors).approval?.minimum,
      3,
    );
    assert.deepEqual(applyFloors(gated, floors).approval?.users, ["carol", "dave"]);
    assert.equal(applyFloors(prod(), []).approval, undefined);
  });

  it("reads SYNCWARD_MIN_PRODUCTION_APPROVALS, and names it when it is wrong", () => {
    assert.deepEqual(floorsFromEnv({}), []);
    assert.deepEqual(floorsFromEnv({ SYNCWARD_MIN_PRODUCTION_APPROVALS: "2" }), [
      { source: "SYNCWARD_MIN_PRODUCTION_APPROVALS", minProductionApprovals: 2 },
    ]);
    assert.throws(
      () => floorsFromEnv({ SYNCWARD_MIN_PRODUCTION_APPROVALS: "two" }),
      /SYNCWARD_MIN_PRODUCTION_APPROVALS must be a whole number/,
    );
  });
});

describe("a weaker drift policy is held to the deployed rule", () => {
  const fields = {
    approval: { users: ["carol", "dave"] },
    syncPolicy: { automated: { prune: true, selfHeal: true } },
  };
  const healing = prod(fields);
  const rows: Array<[string, Record<string, unknown>]> = [
    ["trustedManagers: [*]", { trustedManagers: ["*"] }],
    [
      "ignoreDifferences on the pod spec",
      { ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/template/spec"] }] },
    ],
    [
      "managedFieldsManagers",
      { ignoreDifferences: [{ group: "*", kind: "*", managedFieldsManagers: ["kubectl-edit"] }] },
    ],
    ["selfHeal off", { syncPolicy: { automated: { prune: true, selfHeal: false } } }],
    ["prune off", { syncPolicy: { automated: { prune: false, selfHeal: true } } }],
    [
      "Replace=true",
      { syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["Replace=true"] } },
    ],
  ];
  for (const [name, change] of rows)
    it(`${name}: weakens, keeps the approval, and the deployed revision is a new release`, () => {
      const now = prod({ ...fields, ...change });
      const r = stricterRules(now, guardsOf(healing));
      assert.ok(r.weakens.length > 0, name);
      assert.deepEqual(r.rules.approval?.users, ["carol", "dave"]);
      assert.equal(renderConfigMoved(now, guardsOf(healing)), true);
      assert.equal(driftLoosened(now, guardsOf(healing)), true);
    });

  it("tightening is no new release", () => {
    const tighter = prod({ ...fields, trustedManagers: [] });
    assert.equal(renderConfigMoved(tighter, guardsOf(prod({ ...fields, trustedManagers: ["keda"] }))), false);
  });

  it("a state written before the drift policy was kept: the current one applies", () => {
    const { driftPolicy: _, ...old } = guardsOf(healing);
    assert.equal(driftLoosened(prod({ ...fields, trustedManagers: ["*"] }), old), false);
  });
});
