// The `/history` reply: each revision linked, with the commit's title history recorded next to
// it; entries written before titles were kept show the SHA alone.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { historyReply } from "../../../src/github/history-reply.ts";
import { history } from "../../support/summary-fixtures.ts";
import { checkGfm } from "./gfm-check.ts";

const links = { repoUrl: "https://github.com/acme/shop" };

describe("the /history reply", () => {
  const reply = historyReply("prod", history(3), links);
  const rows = reply.split("\n").filter((l) => /^\| \d+ \|/.test(l));

  it("lists newest first, each SHA a link with its title beside it", () => {
    assert.deepEqual(
      rows.map((r) => r.split(" | ")[0]),
      ["| 3", "| 2", "| 1"],
    );
    assert.equal(
      rows[1],
      "| 2 | 2024-05-02T10:00:42Z | [`2222222`](https://github.com/acme/shop/commit/2222222000000000000000000000000000000000) api: retry on 503 | selfHeal | syncward | Succeeded |",
    );
  });

  it("an entry recorded before titles were kept still reads, with its SHA alone", () => {
    assert.equal(
      rows[2],
      "| 1 | 2024-05-01T10:00:42Z | [`1111111`](https://github.com/acme/shop/commit/1111111000000000000000000000000000000000) | push | alice | Succeeded |",
    );
  });

  it("a committer's title cannot break the table, mention anyone or inject HTML", () => {
    assert.match(rows[0] ?? "", /\) fix \\\| `@mallory` &lt;b&gt;checkout&lt;\/b&gt; \\`x\\` \| push \|/);
    assert.deepEqual(checkGfm(reply), []);
  });
});

describe("the /history reply's evidence column", () => {
  const [first, second, third] = history(3);
  const entries = [
    first!,
    {
      ...second!,
      trigger: "rollback" as const,
      actor: "erin",
      message: "rollback to history 1 (1111111) by erin, pinned (v2 breaks checkout): synced",
      rollback: {
        historyId: 1,
        revision: first!.revision,
        by: "erin",
        reason: "v2 breaks `checkout` | @ops",
      },
    },
    {
      ...third!,
      trigger: "autoRollback" as const,
      actor: "syncward",
      autoRollback: {
        from: "3",
        reason: "3333333 stayed Degraded for 5m",
        evidence: ["Degraded since 10:00"],
      },
    },
  ];
  const reply = historyReply("prod", entries, links);
  const rows = reply.split("\n").filter((l) => /^\| \d+ \|/.test(l));

  it("shows a person's rollback's target, who and why, as an automatic one's evidence", () => {
    assert.match(reply, /\| RESULT \| EVIDENCE \|$/m);
    assert.match(
      rows[1] ?? "",
      /\| rollback \| erin \| Succeeded \| rollback to history 1 \(1111111\) by erin: v2 breaks \\`checkout\\` \\\| `@ops` \|$/,
    );
    assert.match(
      rows[0] ?? "",
      /\| automatic rollback: 3333333 stayed Degraded for 5m: Degraded since 10:00 \|$/,
    );
    assert.match(rows[2] ?? "", /\| Succeeded \| {2}\|$/);
    assert.deepEqual(checkGfm(reply), []);
  });
});
