// `syncward app sync` of an environment whose destination namespace moved since its last sync:
// the refusal says what moved and the two syncs that move it, instead of
// `namespace "team-a-2" is not allowed for environment ok (policy.namespaces: )`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { destinationMoveMessage } from "../../../src/cli/destination-move.ts";
import { guardsOf, stricterRules } from "../../../src/config/stricter.ts";
import { envConfig } from "../../support/env.ts";

const SHA = "9e8d7c6".padEnd(40, "0");
const refusal = (ns: string, allowed = "") =>
  `invalid manifests: configmap/settings: namespace "${ns}" is not allowed for environment dev (policy.namespaces: ${allowed})`;
/** The state after a sync into `namespace`. */
const syncedInto = (namespace: string) => ({
  lastSyncedRevision: SHA,
  deployedRules: { revision: SHA, ...guardsOf(envConfig(namespace)) },
});

describe("destinationMoveMessage", () => {
  it("explains what the gate does: an ungated environment keeps the namespaces it last synced with", () => {
    const { rules } = stricterRules(envConfig("team-a-2"), syncedInto("team-a-1").deployedRules);
    assert.deepEqual(rules.policy.namespaces, [], "so every object bound for team-a-2 is refused");
  });

  it("says what moved and what to do", () => {
    const text = destinationMoveMessage(envConfig("team-a-2"), syncedInto("team-a-1"), refusal("team-a-2"));
    assert.equal(
      text,
      [
        "the destination of environment dev moved since its last sync (at 9e8d7c6): namespace team-a-1 → team-a-2.",
        "Until a sync under the new config succeeds, dev writes only the namespaces it last synced with (team-a-1), so nothing was applied to team-a-2.",
        "To move it, in two syncs:",
        "  1. keep destination.namespace: team-a-1, add team-a-2 to policy.namespaces (team-a-1, team-a-2), and sync;",
        "  2. then set destination.namespace: team-a-2 and sync again.",
        "(An environment with an approval rule takes such a move with the approval.)",
      ].join("\n"),
    );
  });

  const untouched: Array<[string, ReturnType<typeof envConfig>, object, string]> = [
    [
      "the destination did not move",
      envConfig("team-a-1"),
      syncedInto("team-a-1"),
      refusal("kube-system", "team-a-1"),
    ],
    ["never synced", envConfig("team-a-2"), { lastSyncedRevision: undefined }, refusal("team-a-2")],
    ["another failure", envConfig("team-a-2"), syncedInto("team-a-1"), "apply failed: webhook denied"],
    [
      "the new namespace was allowed already (the first of the two steps done)",
      envConfig("team-a-2", { policy: { namespaces: ["team-a-2", "team-a-1"] } }),
      {
        lastSyncedRevision: SHA,
        deployedRules: {
          revision: SHA,
          ...guardsOf(envConfig("team-a-1", { policy: { namespaces: ["team-a-1", "team-a-2"] } })),
        },
      },
      refusal("kube-system"),
    ],
  ];
  for (const [name, env, state, message] of untouched)
    it(`leaves the message alone when ${name}`, () => {
      assert.equal(destinationMoveMessage(env, state, message), undefined);
    });

  it("names other refused namespaces too", () => {
    const message = `${refusal("team-a-2")}\n${refusal("kube-system")}`;
    const text = destinationMoveMessage(envConfig("team-a-2"), syncedInto("team-a-1"), message) ?? "";
    assert.match(text, /Also refused: namespace kube-system, which policy\.namespaces does not list\.$/);
  });
});
