// `/promote <env>`: how it parses, what help says of it, and the reply to each result.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCommands } from "../../../src/github/commands.ts";
import { promoteReply } from "../../../src/github/promote-command.ts";
import type { PromoteResult } from "../../../src/reconciler/promotion/promote.ts";

const ENVS = ["staging", "prod"];
const A = "a".repeat(40);
const C = "c".repeat(40);
const note = {
  from: ["staging"],
  reason: "/promote prod by @bob",
  evidence: ["staging: Healthy for 34m at this commit", "e2e passed"],
};

describe("/promote", () => {
  it("parses an environment, case-insensitively, and refuses unknown ones and flags", () => {
    assert.deepEqual(parseCommands("/promote prod", ENVS), [{ type: "promote", env: "prod" }]);
    assert.deepEqual(parseCommands("/PROMOTE Prod", ENVS), [{ type: "promote", env: "prod" }]);
    assert.deepEqual(parseCommands("/promote", ENVS), [{ type: "promote" }]);
    const [unknown] = parseCommands("/promote prdo", ENVS);
    assert.equal(unknown?.type, "invalid");
    assert.match((unknown as { error: string }).error, /unknown environment/);
    assert.equal((unknown as { suggestion?: string }).suggestion, "/promote prod");
    const [flag] = parseCommands("/promote prod --force", ENVS);
    assert.equal(flag?.type, "invalid");
    const [typo] = parseCommands("/promot prod", ENVS);
    assert.equal((typo as { suggestion?: string }).suggestion, "/promote prod");
  });

  it("replies what moved, what waits, and why nothing did", () => {
    const cases: Array<[string, PromoteResult, boolean, RegExp]> = [
      [
        "refused: not proven",
        {
          refusal:
            "nothing was promoted to prod: staging runs ccccccc, which is not proven yet (staging: Healthy for 40s of 10m at this commit)",
        },
        false,
        /^Sorry, `nothing was promoted to prod: staging runs ccccccc, which is not proven yet \(staging: Healthy for 40s of 10m at this commit\)`\. Nothing was changed\.$/,
      ],
      [
        "waits for approval",
        { revision: A, note, held: true },
        true,
        /^\*\*prod\*\*: promoting `aaaaaaa` \(`staging: Healthy for 34m at this commit, e2e passed`\) waits for `\/approve prod` from an approver\.$/,
      ],
      [
        "synced, with a newer head still waiting",
        {
          revision: A,
          note,
          outcome: {
            phase: "Succeeded",
            message: "synced 1 object",
          } as unknown as NonNullable<Extract<PromoteResult, { revision: string }>["outcome"]>,
          headWaits: { head: C, waiting: "staging: Healthy for 1m of 10m at this commit" },
        },
        true,
        /^\*\*prod\*\*: promoted `aaaaaaa` \(`staging: Healthy for 34m at this commit, e2e passed`\): synced: `synced 1 object`\n\nStill waiting: the branch head `ccccccc` \(`staging: Healthy for 1m of 10m at this commit`\)\.$/,
      ],
      [
        "refused by the gate",
        {
          revision: A,
          note,
          refused: "refused: frozen by @alice since 2026-01-01T00:00:00Z; unfreeze prod first",
        },
        false,
        /^\*\*prod\*\*: promoting `aaaaaaa` is `refused: frozen by @alice/,
      ],
    ];
    for (const [name, result, ok, reply] of cases) {
      const got = promoteReply("prod", result);
      assert.equal(got.ok, ok, name);
      assert.match(got.reply, reply, name);
      assert.ok(got.next.length > 0, name);
    }
  });
});
