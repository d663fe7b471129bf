// `/rollback <env> [id|commit]` and `/unpin <env>`: how they parse, and the reply to each result.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCommands } from "../../../src/github/commands.ts";
import { rollbackReply, unpinReply } from "../../../src/github/rollback-command.ts";
import type { EnvironmentController } from "../../../src/reconciler/environment-controller.ts";
import { pinOf } from "../../../src/reconciler/pin.ts";

const ENVS = ["staging", "prod"];
const A = "a".repeat(40);
const pin = pinOf({ id: 3, revision: A }, "alice", "/rollback on #7", new Date("2026-01-01T00:00:00Z"));
type Result = Awaited<ReturnType<EnvironmentController["rollback"]>>;
const outcome = (phase: string, message: string, extra: object = {}) =>
  ({ phase, message, revision: A, ...extra }) as unknown as Result;

describe("/rollback and /unpin: parsing", () => {
  const rows: Array<[string, object]> = [
    ["/rollback prod", { type: "rollback", env: "prod" }],
    ["/rollback Prod 3", { type: "rollback", env: "prod", target: { historyId: 3 } }],
    ["/rollback prod A1B2C3D", { type: "rollback", env: "prod", target: { commit: "a1b2c3d" } }],
    ["/rollback 3", { type: "rollback", target: { historyId: 3 } }],
    ["/rollback", { type: "rollback" }],
    ["/unpin prod", { type: "unpin", env: "prod" }],
    ["/unpin", { type: "unpin" }],
  ];
  for (const [line, want] of rows) it(line, () => assert.deepEqual(parseCommands(line, ENVS), [want]));

  const invalid: Array<[string, RegExp, string?]> = [
    ["/rollback prdo", /unknown environment `prdo`/, "/rollback prod"],
    ["/rollback prdo 3", /unknown environment `prdo`/, "/rollback prod 3"],
    ["/rollback prod latest", /`latest` is neither a history id \(a whole number\) nor a commit/],
    ["/rollback prod abc12", /`abc12` is neither/],
    ["/rollback prod 3 4", /takes an environment and at most one history id or commit/],
    ["/rollback prod --force", /unknown flag `--force` for `\/rollback` \(it takes no flags\)/],
    ["/unpin prod staging", /`\/unpin` takes at most one environment/],
    ["/rollbak prod", /unknown command/, "/rollback prod"],
  ];
  for (const [line, error, suggestion] of invalid)
    it(`${line}: invalid`, () => {
      const [got] = parseCommands(line, ENVS);
      assert.equal(got?.type, "invalid");
      assert.match((got as { error: string }).error, error);
      assert.equal((got as { suggestion?: string }).suggestion, suggestion);
    });
});

describe("/rollback: the reply to each result", () => {
  const rows: Array<[string, Result, boolean, RegExp, RegExp]> = [
    [
      "an unknown history id: refused, pointing at /history",
      { refused: "prod has no history entry 9 (`syncward app history prod` lists them)" },
      false,
      /^Sorry, ``prod has no history entry 9 \(`syncward app history prod` lists them\)``\. Nothing was changed\.$/,
      /^`\/history prod` lists the history ids and commits prod ran; comment `\/rollback prod <id>` with one of them\.$/,
    ],
    [
      "refused by the gate before anything was pinned",
      outcome("Refused", "refused: environment prod is frozen by bob"),
      false,
      /^\*\*prod\*\*: rolling back to `aaaaaaa` is `refused: environment prod is frozen by bob`\. Nothing was changed\.$/,
      /comment `\/rollback prod` again\.$/,
    ],
    [
      "synced and pinned",
      outcome("Succeeded", "rollback to history 3 (aaaaaaa) by alice, pinned: synced 2 objects", { pin }),
      true,
      /^\*\*prod\*\* rolled back to `aaaaaaa` \(history 3\) and is pinned there: `rollback to history 3 \(aaaaaaa\) by alice, pinned: synced 2 objects`\n\nWhile pinned, automated syncs, promotions and retries hold at `aaaaaaa` and self-heal defends it; new commits to `main` wait until `\/unpin prod`\.$/,
      /^comment `\/unpin prod` when `main` is fit to deploy again; `\/history prod` lists the rollback\.$/,
    ],
    [
      "pinned, but the sync failed: the pin stays",
      outcome("Failed", "1 failed: configmap/conf", { pin }),
      false,
      /^\*\*prod\*\* is pinned at `aaaaaaa` \(rollback to history 3\), but its sync failed: `1 failed: configmap\/conf`\n\nThe pin stays: automated syncs/,
      /the passes retry `aaaaaaa`\), or comment `\/unpin prod` to follow `main` again\.$/,
    ],
    [
      "handed to the lease holder",
      outcome("Succeeded", "handed over", { pin, handedOver: true }),
      true,
      /^\*\*prod\*\* is pinned at `aaaaaaa` \(rollback to history 3\); the replica of syncward that holds the lease syncs it/,
      /^the check run `syncward \/ prod` shows the result; comment `\/unpin prod` to follow `main` again\.$/,
    ],
  ];
  for (const [name, result, ok, reply, next] of rows)
    it(name, () => {
      const got = rollbackReply("prod", "main", result);
      assert.equal(got.ok, ok);
      assert.match(got.reply, reply);
      assert.match(got.next, next);
    });
});

describe("/rollback of a gated environment: the reply", () => {
  it("says that an approval of a newer commit ends the pin too", () => {
    const result = outcome("Succeeded", "rollback to history 3 (aaaaaaa) by alice, pinned: synced", { pin });
    assert.match(
      rollbackReply("prod", "main", result, true).reply,
      /new commits to `main` wait until `\/unpin prod`, or until an approval of a newer commit of `main` deploys it and ends the pin\.$/,
    );
  });
});

describe("/unpin: the reply", () => {
  it("says what was pinned, by which rollback and who, without mentioning them", () => {
    const got = unpinReply("prod", "main", pin, false);
    assert.equal(
      got.reply,
      "**prod** is unpinned: it held `aaaaaaa` (rollback to history 3 by `alice`). The next sync takes the head of `main`.",
    );
    assert.match(
      got.next,
      /^the check run `syncward \/ prod` shows the next sync; `\/history prod` lists the unpin\.$/,
    );
  });
  it("a gated environment: the head waits for its approval", () => {
    const got = unpinReply("prod", "main", pin, true);
    assert.match(got.reply, /The next sync takes the head of `main`, once it is approved\.$/);
    assert.match(got.next, /^an approver comments `\/approve prod`/);
  });
  it("not pinned: nothing to do, and says so", () => {
    const got = unpinReply("prod", "main", undefined, false);
    assert.equal(got.reply, "**prod** is not pinned.");
    assert.match(
      got.next,
      /^nothing to unpin; `\/rollback prod` re-deploys an earlier revision and pins it\.$/,
    );
  });
});
