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
