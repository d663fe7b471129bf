import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nextAction, type PassAction, type PassInput } from "../../../src/reconciler/decide.ts";

const HEAD = "b".repeat(40);
const OLD = "a".repeat(40);
const auto = { automated: true, selfHeal: true, source: "config" as const, label: "Automated" };
const base: PassInput = {
  policy: auto,
  state: { lastSyncedRevision: OLD, syncStatus: "Synced", renderedDigest: "d1" },
  head: HEAD,
  digest: "d2",
  gated: false,
};
const at = (over: Partial<PassInput>): PassInput => ({ ...base, ...over });
const deployed = { lastSyncedRevision: HEAD, syncStatus: "Synced" as const, renderedDigest: "d2" };

const rows: Array<[string, PassInput, PassAction]> = [
  ["a new revision of an automated environment is synced", base, { kind: "sync" }],
  [
    "a new revision that renders the same, on a gated environment, advances without asking",
    at({ digest: "d1", gated: true }),
    { kind: "noChange" },
  ],
  [
    "the same render on an ungated environment still syncs (hooks, drift)",
    at({ digest: "d1" }),
    { kind: "sync" },
  ],
  [
    "no digest of the deployed render: not known to be the same",
    at({ digest: "d1", gated: true, state: { ...base.state, renderedDigest: undefined } }),
    { kind: "sync" },
  ],
  [
    "a stuck revision is not retried by the loop",
    at({ state: { ...base.state, stuck: { revision: HEAD, reason: "x", since: "" } } }),
    { kind: "assess" },
  ],
  [
    "a manual environment only compares",
    at({ policy: { ...auto, automated: false, selfHeal: false } }),
    { kind: "assess" },
  ],
  [
    "the deployed revision, nothing differs",
    at({ state: deployed, assessed: { drifted: 0, extra: 0 } }),
    { kind: "inSync", markSynced: false },
  ],
  [
    "nothing differs but the state said OutOfSync",
    at({ state: { ...deployed, syncStatus: "OutOfSync" }, assessed: { drifted: 0, extra: 0 } }),
    { kind: "inSync", markSynced: true },
  ],
  [
    "drift at the deployed revision is healed",
    at({ state: deployed, assessed: { drifted: 2, extra: 0 } }),
    { kind: "heal" },
  ],
  [
    "drift inside a deny window that holds self-heal",
    at({ state: deployed, healHeld: "deny window", assessed: { drifted: 1, extra: 0 } }),
    { kind: "outOfSync", reason: "self-heal held: deny window" },
  ],
  [
    "drift with self-heal off",
    at({ policy: { ...auto, selfHeal: false }, state: deployed, assessed: { drifted: 1, extra: 0 } }),
    { kind: "outOfSync", reason: "drift detected; self-heal is off" },
  ],
  [
    "drift while frozen",
    at({
      policy: { automated: false, selfHeal: false, source: "freeze", label: "Frozen by alice" },
      state: deployed,
      assessed: { drifted: 1, extra: 0 },
    }),
    { kind: "outOfSync", reason: "Frozen by alice: drift is left alone until unfrozen" },
  ],
  [
    "only objects to prune are not healed",
    at({ state: deployed, assessed: { drifted: 0, extra: 1 } }),
    { kind: "outOfSync", reason: "drift detected; self-heal is off" },
  ],
  [
    "a gated environment's deployed revision that renders otherwise is synced (the gate waits for approval), never healed",
    at({ state: deployed, gated: true, renderMoved: true, assessed: { drifted: 2, extra: 0 } }),
    { kind: "sync" },
  ],
  [
    "the same, before assessing: nothing is compared first",
    at({ state: deployed, gated: true, renderMoved: true }),
    { kind: "sync" },
  ],
];

describe("what a pass does next", () => {
  for (const [name, input, expected] of rows) it(name, () => assert.deepEqual(nextAction(input), expected));
});
