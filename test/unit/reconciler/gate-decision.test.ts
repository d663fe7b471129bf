import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EnvironmentConfig } from "../../../src/config/types.ts";
import { decideGate, type GateInput } from "../../../src/reconciler/gate-decision.ts";
import type { EnvironmentState } from "../../../src/state/types.ts";
import { envConfig } from "../../support/env.ts";

const SHA = "a".repeat(40);
const NOW = new Date("2026-06-01T12:00:00Z");
const state = (over: Partial<EnvironmentState> = {}): EnvironmentState => ({
  environment: "app.prod",
  syncStatus: "OutOfSync",
  history: [],
  pendingApprovals: [],
  selfHeals: {},
  ...over,
});
const B = "b".repeat(40);
const pinnedAt = (revision: string, at = "2026-06-01T11:00:00Z") => ({
  revision,
  historyId: 2,
  by: "alice",
  at,
  reason: "",
});
const frozen = { freeze: { by: "alice", at: "2026-06-01T10:00:00Z", reason: "release night" } };
const approved = (by: string, at = "2026-06-01T11:30:00Z", id?: number) => ({
  sha: SHA,
  by,
  at,
  ...(id !== undefined ? { id } : {}),
});
// Open 02:00-03:00 UTC only; a manual sync may pass.
const window = { kind: "allow", schedule: "0 2 * * *", duration: "1h", timeZone: "UTC", manualSync: true };
const denyAll = { kind: "deny", schedule: "* * * * *", duration: "2m" };
const gated = envConfig("prod", { approval: { users: ["carol", "dave"] } });
const twoNeeded = envConfig("prod", {
  approval: { users: ["carol", "dave"], minimum: 2, expiresAfter: "1h" },
});
const signed = envConfig("prod", { policy: { namespaces: ["prod"], requireSignedCommits: true } });
const checked = envConfig("prod", { requireChecks: ["ci/test"] });
const plain = envConfig("prod");
const healing = envConfig("prod", { syncPolicy: { automated: { selfHeal: true } } });

type Row = [string, Partial<GateInput> & { rules: EnvironmentConfig }, RegExp | "allowed"];
const rows: Row[] = [
  ["nothing configured: allowed", { rules: plain }, "allowed"],
  [
    "a freeze stops the automated pass",
    { rules: plain, state: state(frozen) },
    /^refused: frozen by @alice since .* \(release night\)/,
  ],
  [
    "self-heal turned off (app set) stops self-heal",
    { rules: plain, path: "selfHeal" },
    /self-heal is off for dev/,
  ],
  [
    "a freeze stops self-heal",
    { rules: healing, path: "selfHeal", state: state(frozen) },
    /frozen by @alice/,
  ],
  ["a freeze stops a retry", { rules: plain, path: "retry", state: state(frozen) }, /frozen by @alice/],
  [
    "a forced manual sync passes a freeze",
    { rules: plain, path: "manual", ignoreFreeze: true, state: state(frozen) },
    "allowed",
  ],
  [
    "a manual sync is told to unfreeze or force",
    { rules: plain, path: "manual", state: state(frozen) },
    /or force the sync$/,
  ],
  [
    "a closed window holds the automated pass until it opens",
    { rules: envConfig("prod", { syncWindows: [window] }) },
    /^refused: sync window closed until 2026-06-02T02:00:00.000Z/,
  ],
  [
    "a window with manualSync lets a person sync",
    { rules: envConfig("prod", { syncWindows: [window] }), path: "manual" },
    "allowed",
  ],
  [
    "a deny window does not hold self-heal",
    {
      rules: { ...healing, syncWindows: envConfig("prod", { syncWindows: [denyAll] }).syncWindows },
      path: "selfHeal",
    },
    "allowed",
  ],
  [
    "a deny window with selfHeal: false holds self-heal",
    {
      rules: {
        ...healing,
        syncWindows: envConfig("prod", { syncWindows: [{ ...denyAll, selfHeal: false }] }).syncWindows,
      },
      path: "selfHeal",
    },
    /self-heal held/,
  ],
  [
    "a retry on its revision passes a closed window",
    { rules: envConfig("prod", { syncWindows: [window] }), path: "retry" },
    "allowed",
  ],
  [
    "an unsigned commit is refused",
    { rules: signed, signatureProblem: "commit aaaaaaa is not signed" },
    /not signed; environment dev deploys only signed commits/,
  ],
  [
    "a signature is checked before approval",
    { rules: { ...signed, approval: gated.approval }, signatureProblem: "unsigned" },
    /unsigned/,
  ],
  ["an unapproved revision waits", { rules: gated }, /^waiting for approval \(0\/1\)/],
  [
    "an approved revision passes",
    { rules: gated, state: state({ pendingApprovals: [approved("carol")] }) },
    "allowed",
  ],
  [
    "an approval of another revision does not count",
    { rules: gated, state: state({ pendingApprovals: [{ ...approved("carol"), sha: "b".repeat(40) }] }) },
    /0\/1/,
  ],
  [
    "self-heal needs no approval",
    { rules: { ...healing, approval: gated.approval }, path: "selfHeal" },
    "allowed",
  ],
  ["a retry on its revision needs no new approval", { rules: gated, path: "retry" }, "allowed"],
  [
    "a retry never moves a gated environment, even to an approved revision",
    { rules: gated, path: "refresh", state: state({ pendingApprovals: [approved("carol")] }) },
    /does not move dev to another revision/,
  ],
  [
    "a retry that would move to an unapproved revision: that revision waits for approval",
    { rules: gated, path: "refresh" },
    /^waiting for approval \(0\/1\)/,
  ],
  [
    "the CLI's manual sync needs no approval",
    { rules: gated, path: "manual", needsApproval: false },
    "allowed",
  ],
  [
    "a comment's manual sync needs approval",
    { rules: gated, path: "manual", needsApproval: true },
    /waiting for approval/,
  ],
  [
    "one person approving twice (login renamed, same id) counts once",
    {
      rules: twoNeeded,
      state: state({
        pendingApprovals: [approved("carol", undefined, 7), approved("carol-new", undefined, 7)],
      }),
    },
    /1\/2/,
  ],
  [
    "two people count twice",
    {
      rules: twoNeeded,
      state: state({ pendingApprovals: [approved("carol", undefined, 7), approved("dave", undefined, 8)] }),
    },
    "allowed",
  ],
  [
    "an approval judged against another last synced revision does not count, and the message says so",
    {
      rules: gated,
      state: state({
        lastSyncedRevision: "c".repeat(40),
        pendingApprovals: [{ ...approved("carol"), base: "b".repeat(40) }],
      }),
    },
    /^waiting for approval \(0\/1\); 1 approval\(s\) were given when \w+ last synced another revision/,
  ],
  [
    "an approval judged against the last synced revision counts",
    {
      rules: gated,
      state: state({
        lastSyncedRevision: "c".repeat(40),
        pendingApprovals: [{ ...approved("carol"), base: "c".repeat(40) }],
      }),
    },
    "allowed",
  ],
  [
    "where contributors do not matter (allowAuthor), the base an approval was judged against does not either",
    {
      rules: envConfig("prod", { approval: { users: ["carol"], allowAuthor: true } }),
      state: state({
        lastSyncedRevision: "c".repeat(40),
        pendingApprovals: [{ ...approved("carol"), base: "" }],
      }),
    },
    "allowed",
  ],
  [
    "an expired approval is ignored and the message says so",
    {
      rules: twoNeeded,
      state: state({
        pendingApprovals: [approved("carol", "2026-06-01T10:00:00Z", 7), approved("dave", undefined, 8)],
      }),
    },
    /1\/2\); 1 approval\(s\) expired after 1h/,
  ],
  [
    "a weakening config change says it is held to the old rule",
    { rules: gated, weakens: ["approval removed: syncs no longer wait for /approve"] },
    /held to the old rule \(approval removed/,
  ],
  [
    "missing required checks hold the revision",
    { rules: checked, missingChecks: ["ci/test"] },
    /waiting for checks to pass on aaaaaaa: ci\/test/,
  ],
  ["passed required checks let it through", { rules: checked, missingChecks: [] }, "allowed"],
  [
    "self-heal does not wait for checks",
    { rules: { ...healing, requireChecks: ["ci/test"] }, path: "selfHeal", missingChecks: ["ci/test"] },
    "allowed",
  ],
  [
    "self-heal of a gated environment whose render changed since it was approved waits for approval",
    {
      rules: envConfig("prod", {
        approval: { users: ["carol"] },
        syncPolicy: { automated: { selfHeal: true } },
      }),
      path: "selfHeal",
      renderChanged: `the render of ${SHA.slice(0, 7)} changed since it was approved: /ConfigMap:prod/settings changed`,
    },
    /^waiting for approval \(0\/1\): the render of aaaaaaa changed since it was approved: \/ConfigMap:prod\/settings changed; self-heal applies only what was approved$/,
  ],
  [
    "a freeze is still said first when the render changed",
    {
      rules: envConfig("prod", {
        approval: { users: ["carol"] },
        syncPolicy: { automated: { selfHeal: true } },
      }),
      path: "selfHeal",
      state: state(frozen),
      renderChanged: "the render of aaaaaaa changed since it was approved: x",
    },
    /frozen by @alice/,
  ],
  [
    "an approval of another render of the revision does not count, and the reason says the render changed",
    {
      rules: gated,
      state: state({ pendingApprovals: [{ ...approved("carol"), render: "d1" }] }),
      render: "d2",
      renderChanged: "the render of aaaaaaa changed since it was approved: x changed",
    },
    /^waiting for approval \(0\/1\); the render of aaaaaaa changed since it was approved: x changed$/,
  ],
  [
    "an approval of this render counts",
    {
      rules: gated,
      state: state({ pendingApprovals: [{ ...approved("carol"), render: "d2" }] }),
      render: "d2",
    },
    "allowed",
  ],
  ...(["automated", "refresh", "retry", "selfHeal", "manual"] as const).map(
    (path): Row => [
      `a render at a pin other than the rollback entry's stops the ${path} path`,
      {
        rules: healing,
        path,
        pinnedRender: "the render of aaaaaaa today is not the one history entry 3 applied",
      },
      /^the render of aaaaaaa today is not the one history entry 3 applied$/,
    ],
  ),
  ...(["automated", "refresh", "retry", "selfHeal"] as const).map(
    (path): Row => [
      `while pinned at another revision nothing else is written on the ${path} path (a release begun before the pin)`,
      { rules: healing, path, state: state({ pin: pinnedAt(B) }) },
      /^refused: dev is pinned at bbbbbbb by alice \(rollback to history 2\), and nothing but bbbbbbb is written while it stands: aaaaaaa \(begun before the pin\) was not written$/,
    ],
  ),
  [
    "a person's request may name another revision (refused by its caller, or an approval ending the pin)",
    { rules: plain, path: "manual", state: state({ pin: pinnedAt(B) }) },
    "allowed",
  ],
  [
    "the pinned revision itself is written",
    { rules: healing, state: state({ pin: pinnedAt(SHA) }) },
    "allowed",
  ],
  [
    "an approval given before the pin does not count for another revision, and the reason says so",
    {
      rules: gated,
      path: "manual",
      needsApproval: true,
      state: state({ pin: pinnedAt(B, "2026-06-01T11:45:00Z"), pendingApprovals: [approved("carol")] }),
    },
    /^waiting for approval \(0\/1\); 1 approval\(s\) were given before dev was pinned at bbbbbbb: approve again$/,
  ],
  [
    "one given after the pin does",
    {
      rules: gated,
      path: "manual",
      needsApproval: true,
      state: state({
        pin: pinnedAt(B, "2026-06-01T11:45:00Z"),
        pendingApprovals: [approved("carol", "2026-06-01T11:50:00Z")],
      }),
    },
    "allowed",
  ],
  [
    "a freeze is said before the pin's render",
    { rules: plain, state: state(frozen), pinnedRender: "the render of aaaaaaa today is not ..." },
    /frozen by @alice/,
  ],
  [
    "the pin's render is said before a missing approval",
    { rules: gated, pinnedRender: "the render of aaaaaaa today is not ..." },
    /^the render of aaaaaaa today is not/,
  ],
];

describe("the gate's decision", () => {
  for (const [name, input, expected] of rows) {
    it(name, () => {
      const decision = decideGate({ path: "automated", revision: SHA, state: state(), now: NOW, ...input });
      if (expected === "allowed") assert.equal(decision.allowed, true);
      else {
        assert.equal(decision.allowed, false);
        assert.match(decision.allowed ? "" : decision.reason, expected);
      }
    });
  }
});

describe("an allowed decision names who approved", () => {
  it("lists the approvers where the approval check applied, and nobody elsewhere", () => {
    const base = { path: "automated" as const, revision: SHA, now: NOW };
    const yes = decideGate({
      ...base,
      rules: gated,
      state: state({ pendingApprovals: [approved("carol")] }),
    });
    assert.deepEqual(yes, { allowed: true, approvals: ["carol"] });
    assert.deepEqual(decideGate({ ...base, rules: plain, state: state() }), { allowed: true });
  });
});
