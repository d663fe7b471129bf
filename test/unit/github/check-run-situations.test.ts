// The check run as a developer who just merged and an on-call engineer at 3 a.m. read it, one
// golden file per situation (`UPDATE_GOLDEN=1` rewrites them), each also checked as
// GitHub-flavoured Markdown: tables well-formed, user text inert, every commit linked.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  CHECK_OUTPUT_MAX_BYTES,
  type CheckRunOutputInput,
  checkRunOutput,
  conclusionFor,
  deploymentDescription,
  prCommentBody,
} from "../../../src/github/summary.ts";
import { byteLength } from "../../../src/github/truncate.ts";
import { CHECK_RUNS, INTRUSION, input, links, WEBHOOK } from "../../support/check-run-situations.ts";
import { history, resource, resultOf, SHA, stateOf } from "../../support/summary-fixtures.ts";
import { checkGfm } from "./gfm-check.ts";

const fixtures = join(import.meta.dirname, "../../fixtures/github/check-runs");
function golden(name: string, input: CheckRunOutputInput): string {
  const out = checkRunOutput(input);
  // A preview's conclusion is the preview's own (neutral, or failure when refused).
  const conclusion = input.preview
    ? "set by the preview"
    : conclusionFor(input.result, input.alert, input.awaitingApproval, input.reverted);
  const actual = `title: ${out.title}\nconclusion: ${conclusion}\n\n${out.summary}\n\n<!-- text -->\n\n${out.text}\n`;
  const path = join(fixtures, `${name}.md`);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  assert.equal(actual, readFileSync(path, "utf8"), `${name}.md differs (UPDATE_GOLDEN=1 to accept)`);
  return actual;
}

/** The rendered Markdown (a golden file's title and conclusion lines are not Markdown). */
function assertWellFormed(markdown: string, mentions: string[] = []) {
  const rendered = markdown.startsWith("title: ") ? markdown.slice(markdown.indexOf("\n\n") + 2) : markdown;
  assert.deepEqual(checkGfm(rendered, mentions), []);
}

describe("check runs, situation by situation", () => {
  it("a successful sync: what runs where, linked, and nothing to do", () => {
    const md = golden("synced", CHECK_RUNS.synced());
    assert.match(md, /^title: Synced, Healthy$/m);
    assert.match(
      md,
      /^\[\*\*prod\*\*\]\(https:\/\/shop\.example\.com\) runs \[`a1b2c3d`\]\(https:\/\/github\.com\/acme\/shop\/commit\/a1b2c3d4e5f60718293a4b5c6d7e8f9012345678\) web: bump to 1\.29 in namespace `shop` on `prod-eu`\.$/m,
    );
    assert.match(md, /\*\*Next:\*\* nothing to do; comment `\/history prod` for earlier syncs\.\n$/);
    assertWellFormed(md);
  });

  it("a failed sync: says what still runs, each error once with its line breaks, and why a retry fails", () => {
    const md = golden("failed", CHECK_RUNS.failed());
    assert.match(md, /^title: Sync failed; prod still runs 9e8d7c6$/m);
    assert.match(md, /^conclusion: failure$/m);
    assert.equal(
      md.split('admission webhook "policy.acme.io" denied the request:\n').length,
      2,
      "once, whole",
    );
    assert.match(md, /`deployment\.apps\/api-4` in `shop` and 3 more objects:/);
    assert.match(
      md,
      /\n````\nadmission webhook[^`]*```policy\.md```\)\n````\n/,
      "a fence the message cannot close",
    );
    assert.match(
      md,
      /\*\*Next:\*\* Nothing was changed\. Fix the error above in Git and push; `\/sync prod` retries this same commit/,
    );
    assertWellFormed(md);
  });

  it("a self-heal that reverted an intrusion: action required, titled after the finding", () => {
    const md = golden("intrusion", CHECK_RUNS.intrusion());
    assert.match(
      md,
      /^title: Reverted an intruder's changes to deploy\/web: new container evil:1, privileged, ServiceAccount changed, hostPath volume$/m,
    );
    assert.match(md, /^conclusion: action_required$/m);
    // Three columns, short cells: it fits a 900 px column.
    const header = md.split("\n").find((l) => l.startsWith("| FINDING"));
    assert.equal(header, "| FINDING | FIELD | CHANGED BY |");
    for (const row of md.split("\n").filter((l) => l.startsWith("| ⚠️")))
      assert.ok(row.length <= 160, `short row: ${row}`);
    assert.match(md, /`` cluster-admin\|<b>@mallory<\/b>` ``/, "the value shown literally, in a code span");
    assert.match(
      md,
      /\*\*Next:\*\* find who can write to `deploy\/web` \(the changes came as `kubectl-patch`\)/,
    );
    assertWellFormed(md);
  });

  it("waiting for approval: one count, approvers who already approved not asked, commits linked", () => {
    const md = golden("approval", CHECK_RUNS.approval());
    assert.match(md, /^title: Waiting for approval: 1 more needed$/m);
    assert.match(md, /\(1 so far: @carol; \*\*1 more\*\* needed\)/);
    assert.match(md, /Approvers: @erin, @acme\/sre\./);
    assert.match(md, /\[#12\]\(https:\/\/github\.com\/acme\/shop\/pull\/12\) Bump web/);
    assertWellFormed(md, ["@carol", "@erin", "@acme/sre"]);
  });

  it("a preview: names the pull request's head and base, and the Secrets it did not compare", () => {
    const md = golden("preview", CHECK_RUNS.preview());
    assert.doesNotMatch(md, /7777777/, "GitHub's test merge is never named as a commit");
    assert.match(md, /merging \[#12\]\([^)]*\/pull\/12\) \(`bump-web` at \[`4f9c2e1`\]/);
    assert.match(md, /into `main` \(at \[`9e8d7c6`\]/);
    assert.match(md, /\*\*1 Secret not compared\*\* .*: `secret\/db` in `shop`\./);
    assert.equal(md.split("```diff").length, 2, "a diff the summary holds whole is not repeated in the text");
    assertWellFormed(md);
  });

  it("out of sync with no operation: what runs and where the branch is are two commits", () => {
    const md = golden("out-of-sync", CHECK_RUNS["out-of-sync"]());
    assert.match(md, /^title: OutOfSync: prod runs 9e8d7c6, main is at 4f9c2e1$/m);
    assert.match(md, /OutOfSync: runs \[`9e8d7c6`\]\([^)]*\), main is at \[`4f9c2e1`\]/);
    assertWellFormed(md);
  });

  it("every situation ends with exactly one Next line", () => {
    for (const overrides of [
      {},
      { result: resultOf() },
      { result: resultOf({ phase: "Refused", message: "refused: frozen", resources: [] }) },
      { result: resultOf({ resources: [] }) },
      { reverted: INTRUSION, result: resultOf() },
      { awaitingApproval: { revision: SHA } },
      { effectivePolicy: "Frozen by @alice" },
      { result: resultOf({ phase: "Error", message: "cluster unreachable", resources: [] }) },
    ] satisfies Array<Partial<CheckRunOutputInput>>) {
      const out = checkRunOutput(input(overrides));
      const all = `${out.summary}\n\n${out.text}`;
      assert.equal(all.split("**Next:**").length, 2, JSON.stringify(Object.keys(overrides)));
      assert.match(out.text, /\n\*\*Next:\*\* [^\n]+$/);
    }
  });
});

describe("the Next line", () => {
  const table: Array<[string, Partial<CheckRunOutputInput>, RegExp]> = [
    ["synced", { result: resultOf() }, /nothing to do; comment `\/history prod`/],
    [
      "a cluster error is retried, not fixed in Git",
      { result: resultOf({ phase: "Error", resources: [] }) },
      /tries again with backoff/,
    ],
    ["frozen", { effectivePolicy: "Frozen by @alice since …" }, /`\/unfreeze prod`/],
    [
      "nothing to sync",
      { result: resultOf({ resources: [] }) },
      /`deploy\/prod` on `main` holds the manifests/,
    ],
    [
      "out of sync",
      { state: stateOf({ syncStatus: "OutOfSync" }), outOfSync: true },
      /`\/sync prod`.*\*\*Sync\*\*/,
    ],
    ["the caller knows better", { next: "wait for ci." }, /^\*\*Next:\*\* wait for ci\.$/m],
  ];
  for (const [name, overrides, want] of table)
    it(name, () => assert.match(checkRunOutput(input(overrides)).text.split("\n").at(-1) ?? "", want));
});

describe("check runs at GitHub's limit", () => {
  const MAX = CHECK_OUTPUT_MAX_BYTES;

  it("a 2,000-object app with a large preview note: totals, errors and pointers survive", () => {
    const resources = Array.from({ length: 2000 }, (_, i) =>
      resource({
        kind: "ConfigMap",
        group: "",
        name: `settings-${String(i).padStart(4, "0")}`,
        status: i % 4 === 0 ? "OutOfSync" : "Synced",
        action: i % 4 === 0 ? "configured" : "unchanged",
        message: `configmap/settings-${i} ${i % 4 === 0 ? "configured" : "unchanged"} 漢字`,
      }),
    );
    resources.push(
      resource({ name: "api", status: "Failed", action: "failed", message: WEBHOOK }),
      resource({ name: "worker", status: "Failed", action: "failed", message: WEBHOOK }),
    );
    const diff = Array.from(
      { length: 2000 },
      (_, i) =>
        `--- live/v1/ConfigMap/shop/settings-${i}\n+++ git/v1/ConfigMap/shop/settings-${i}\n-  k: a\n+  k: b 😀\n`,
    ).join("");
    const note = `What merging this pull request would change.\n\n${"> a long note line 漢字\n".repeat(400)}`;
    const result = resultOf({ phase: "Failed", message: "2 of 2002 objects failed", resources, writes: 0 });
    const out = checkRunOutput(
      input({ result, diff, notes: [note], state: stateOf({ history: history(40) }) }),
    );
    for (const md of [out.summary, out.text]) {
      assert.ok(byteLength(md) <= MAX, `${byteLength(md)} bytes`);
      assertWellFormed(md);
    }
    assert.ok(byteLength(out.summary) > MAX - 4000, "uses the room it has");
    assert.ok(out.summary.startsWith("[**prod**]"), "the first line first");
    assert.ok(out.summary.includes(note.trim()), "the note whole, inside the budget");
    assert.match(
      out.summary,
      /\*\*Errors:\*\*\n- Failed: 2 of 2002 objects failed\n- `deployment\.apps\/api` in `shop`, `deployment\.apps\/worker` in `shop`:/,
    );
    assert.match(
      out.summary,
      /_1,500 unchanged objects not listed; `syncward app get prod` lists every object\._/,
    );
    assert.match(
      out.summary,
      /_and [\d,]+ more changed objects not shown here; `syncward app get prod` lists every object\._|Diff \(cut: `syncward app diff prod` shows all of it\)|The diff \(\d+ bytes\) does not fit here/,
    );
    assert.match(
      out.summary,
      /\n\n---\n\*\*Totals:\*\* 0 created, 500 configured, 1500 unchanged, 0 pruned, 2 failed, 0 skipped; 0 writes\.$/,
    );
    assert.doesNotMatch(out.summary, /… truncated \d+ bytes …/, "fitted by parts, never cut blindly");
    // The text picks the diff up where the summary stopped, so together they read on.
    const body = (md: string) => /```diff\n([\s\S]*?)\n```/.exec(md)?.[1] ?? "";
    assert.match(out.text, /### Diff, continued from the summary/);
    assert.ok(diff.startsWith(`${body(out.summary)}\n${body(out.text)}`), "continuous");
    assert.match(out.text, /\n\*\*Next:\*\* [^\n]+$/);
  });
});

describe("the PR comment", () => {
  it("links each environment's commit and check run", () => {
    const body = prCommentBody(
      [
        {
          env: "prod",
          status: "waiting for approval",
          revision: SHA,
          checkUrl: "https://github.com/acme/shop/runs/62",
          note: "comment /approve prod to deploy (1 of 2 approvals; 1 more needed)",
          approvers: ["@erin"],
        },
      ],
      "syncward:summary",
      links,
    );
    assert.ok(
      body.includes(
        `| \`prod\` | waiting for approval | [\`a1b2c3d\`](https://github.com/acme/shop/commit/${SHA}) | [details](https://github.com/acme/shop/runs/62) | comment /approve prod to deploy (1 of 2 approvals; 1 more needed) approvers: @erin |`,
      ),
      body,
    );
    assertWellFormed(body, ["@erin"]);
  });
});

describe("a note larger than the budget (a render error's output)", () => {
  it("is cut inside its fence, which is closed; the status lines stay", () => {
    const note = `Render failed; nothing was applied.\n\n\`\`\`\n${"error: line 漢字\n".repeat(10_000)}\`\`\``;
    const out = checkRunOutput(input({ notes: [note] }));
    assert.ok(byteLength(out.summary) <= CHECK_OUTPUT_MAX_BYTES, `${byteLength(out.summary)}`);
    assert.ok(out.summary.startsWith("[**prod**]"), "the first line first");
    assert.match(out.summary, /\n- \*\*Sync Status:\*\* Synced to main/);
    assert.match(out.summary, /… truncated \d+ bytes …\n\n?```\n/);
    assertWellFormed(out.summary);
    assert.match(out.text, /\n\*\*Next:\*\* [^\n]+$/);
  });
});

describe("deployment status descriptions", () => {
  const table: Array<[string, Parameters<typeof deploymentDescription>[0], RegExp]> = [
    ["a success", resultOf({ message: "synced 3 objects" }), /^synced 3 objects$/],
    [
      "a failure with a long multi-line webhook message",
      resultOf({
        phase: "Failed",
        message: "1 of 2 objects failed",
        resources: [
          resource({ status: "Failed", action: "failed", message: `${WEBHOOK}\n${"x".repeat(600)}` }),
        ],
      }),
      /^failed: admission webhook "policy\.acme\.io" denied the request: - container web: .*…$/,
    ],
    [
      "an error",
      resultOf({ phase: "Error", message: "cluster\nunreachable", resources: [] }),
      /^error: cluster unreachable$/,
    ],
    [
      "a refusal, said once",
      resultOf({ phase: "Refused", message: "refused: frozen by @alice (release night)", resources: [] }),
      /^refused: frozen by @alice \(release night\)$/,
    ],
  ];
  for (const [name, outcome, want] of table)
    it(name, () => {
      const text = deploymentDescription(outcome);
      assert.match(text, want);
      assert.ok(Array.from(text).length <= 140, `${text.length} characters`);
      assert.doesNotMatch(text, /\n|truncated/);
    });
});
