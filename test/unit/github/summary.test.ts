import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  annotationsFor,
  type CheckRunOutputInput,
  checkRunOutput,
  conclusionFor,
  type DriftFightAlert,
  htmlMarker,
  prCommentBody,
} from "../../../src/github/summary.ts";
import { byteLength } from "../../../src/github/truncate.ts";
import {
  envConfig,
  history,
  OLD_SHA,
  resource,
  resultOf,
  SHA,
  stateOf,
} from "../../support/summary-fixtures.ts";

const fixtures = join(import.meta.dirname, "../../fixtures/github");

/** Compares with a golden file; `UPDATE_GOLDEN=1` rewrites it. */
function golden(name: string, actual: string) {
  const path = join(fixtures, name);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  assert.equal(actual, readFileSync(path, "utf8"), `${name} differs (UPDATE_GOLDEN=1 to accept)`);
}

function input(overrides: Partial<CheckRunOutputInput> = {}): CheckRunOutputInput {
  return {
    env: envConfig(),
    state: stateOf(),
    repoBranch: "main",
    effectivePolicy: "Automated (Prune, SelfHeal)",
    ...overrides,
  };
}

const alert: DriftFightAlert = {
  object: "deployment.apps/web",
  fields: ["/spec/replicas"],
  managers: ["kube-controller-manager"],
  heals: 6,
  windowMinutes: 10,
  ignoreSnippet:
    "ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    name: web\n    jsonPointers:\n      - /spec/replicas\n",
};

const DIFF = [
  "--- live/apps/Deployment/shop/web",
  "+++ git/apps/Deployment/shop/web",
  "@@ -6,3 +6,3 @@",
  " spec:",
  "-  replicas: 2",
  "+  replicas: 3",
  "",
].join("\n");

describe("checkRunOutput: titles and status lines", () => {
  it("a successful sync reads like argocd app get", () => {
    const out = checkRunOutput(input({ result: resultOf() }));
    assert.equal(out.title, "Synced, Healthy");
    const lines = out.summary.split("\n");
    assert.deepEqual(lines.slice(0, 6), [
      "**prod** runs `a1b2c3d` in namespace `shop` on `prod-eu`.",
      "",
      "- **Sync Policy:** Automated (Prune, SelfHeal)",
      "- **Sync Status:** Synced to main (`a1b2c3d`)",
      "- **Health Status:** Healthy",
      "- **Operation:** Succeeded: synced 3 objects",
    ]);
    assert.ok(lines.includes("| KIND | NAMESPACE | NAME | STATUS | HEALTH | MESSAGE |"));
    assert.ok(
      lines.includes("| Deployment | shop | web | Synced | Healthy | deployment.apps/web configured |"),
    );
    assert.ok(lines.includes("_1 unchanged object not listed; `syncward app get prod` lists every object._"));
    assert.ok(!out.summary.includes("configmap/web-config"), "unchanged objects are counted, not listed");
    assert.ok(
      out.summary.endsWith(
        "**Totals:** 1 created, 1 configured, 1 unchanged, 0 pruned, 0 failed, 0 skipped; 2 writes.",
      ),
    );
    golden("summary-synced.md", out.summary);
  });

  it("a dry run with changes is OutOfSync with a count", () => {
    const result = resultOf({
      dryRun: true,
      writes: 0,
      resources: [
        resource({
          status: "OutOfSync",
          action: "configured",
          message: "deployment.apps/web configured (dry run)",
        }),
        resource({ kind: "Service", group: "", name: "web", status: "OutOfSync", action: "created" }),
        resource({ kind: "ConfigMap", group: "", name: "old", status: "OutOfSync", action: "would prune" }),
        resource({ kind: "ConfigMap", group: "", name: "same", action: "unchanged" }),
      ],
    });
    const out = checkRunOutput(input({ result, diff: DIFF }));
    assert.equal(out.title, "OutOfSync (3 changes)");
    assert.match(out.summary, /^- \*\*Sync Status:\*\* OutOfSync from main \(`a1b2c3d`\)$/m);
    assert.match(out.summary, /^- \*\*Operation:\*\* Succeeded \(dry run\): /m);
    assert.match(out.summary, /\| ConfigMap \| shop \| old \| OutOfSync \(requires pruning\) \|/);
    assert.equal(conclusionFor(result), "success");
    assert.equal(
      checkRunOutput(
        input({ result: resultOf({ ...result, resources: [resource({ status: "OutOfSync" })] }) }),
      ).title,
      "OutOfSync (1 change)",
    );
  });

  it("never reports 0/0 as success: nothing to sync is said, and neutral", () => {
    const result = resultOf({ resources: [], message: "synced 0 objects" });
    const out = checkRunOutput(input({ result }));
    assert.equal(out.title, "Nothing to sync");
    assert.match(
      out.summary,
      /\*\*nothing to sync\*\*: Git declares no objects for this environment and none are managed/,
    );
    assert.doesNotMatch(out.summary, /\| KIND \|/, "no empty table");
    assert.equal(conclusionFor(result), "neutral");
  });

  it("a refused sync fails and says why in the title", () => {
    const result = resultOf({
      phase: "Refused",
      message: "render produced 0 objects; refusing to prune 7 live objects",
      resources: [],
    });
    const out = checkRunOutput(input({ result }));
    assert.equal(out.title, "Refused: render produced 0 objects; refusing to prune 7 live objects");
    assert.match(out.summary, /\*\*Errors:\*\*\n- Refused: render produced 0 objects/);
    assert.equal(conclusionFor(result), "failure");
  });

  it("a failed sync lists the failed objects in the footer", () => {
    const failed = resource({
      name: "api",
      status: "Failed",
      action: "failed",
      message: 'Deployment.apps "api" is invalid: spec.selector: field is immutable',
      health: { status: "Degraded", message: "ProgressDeadlineExceeded" },
    });
    const result = resultOf({
      phase: "Failed",
      message: "1 of 4 objects failed",
      resources: [...resultOf().resources, failed],
    });
    const out = checkRunOutput(
      input({ result, state: stateOf({ syncStatus: "OutOfSync", health: "Degraded" }) }),
    );
    assert.equal(out.title, "Sync failed; prod partly updated from a1b2c3d");
    assert.match(out.summary, /^- \*\*Health Status:\*\* Degraded$/m);
    assert.match(out.summary, /^- \*\*Sync Status:\*\* OutOfSync from main \(`a1b2c3d`\)$/m);
    assert.match(
      out.summary,
      /\| Deployment \| shop \| api \| Failed \| Degraded \| .*field is immutable \(ProgressDeadlineExceeded\) \|/,
    );
    assert.match(out.summary, /- `deployment\.apps\/api` in `shop`: Deployment\.apps "api" is invalid/);
    assert.equal(conclusionFor(result), "failure");
    assert.equal(
      checkRunOutput(
        input({ result: resultOf({ phase: "Error", message: "cluster unreachable", resources: [] }) }),
      ).title,
      "Sync error; prod still runs a1b2c3d",
    );
    golden("summary-failed.md", out.summary);
  });

  it("a sync waiting for approval asks for action", () => {
    const state = stateOf({
      syncStatus: "OutOfSync",
      pendingApprovals: [
        { sha: SHA, by: "carol", at: "2024-05-01T12:00:00Z" },
        { sha: OLD_SHA, by: "dave", at: "2024-04-01T12:00:00Z" },
      ],
    });
    const env = envConfig({
      approval: {
        users: ["carol", "erin"],
        teams: ["acme/sre"],
        minimum: 2,
        allowAuthor: false,
        trustedBots: [],
      },
    });
    const out = checkRunOutput(input({ env, state, awaitingApproval: { revision: SHA } }));
    assert.equal(out.title, "Waiting for approval: 1 more needed");
    assert.match(
      out.summary,
      /`a1b2c3d` needs 2 approvals before it is synced to `prod` \(1 so far: @carol; \*\*1 more\*\* needed\)\./,
    );
    assert.doesNotMatch(out.summary, /@dave/, "approvals of another commit do not count");
    assert.match(out.summary, /Approvers: @erin, @acme\/sre\./, "carol approved: not asked again");
    assert.match(
      out.text,
      /\*\*Next:\*\* an approver clicks \*\*Approve\*\* above or comments `\/approve prod`/,
    );
    assert.equal(conclusionFor(undefined, undefined, { revision: SHA }), "action_required");
    assert.match(out.text, /- \*\*Approval:\*\* 2 approvals from @carol, @erin, team `acme\/sre`/);
  });

  it("a drift fight fails, names the managers and offers the ignore snippet", () => {
    const out = checkRunOutput(input({ result: resultOf(), alert }));
    assert.equal(out.title, "Drift fight on deployment.apps/web");
    assert.match(out.summary, /Self-heal re-applied it 6 times in 10 minutes/);
    assert.match(out.summary, /\*\*Changed by \(field managers\):\*\* `kube-controller-manager`/);
    assert.ok(out.summary.includes(`\`\`\`yaml\n${alert.ignoreSnippet}\`\`\``));
    assert.equal(conclusionFor(resultOf(), alert), "failure");
  });

  it("a self-heal that reverted security-relevant changes flags them, with manager, time and masked value", () => {
    const out = checkRunOutput(
      input({
        result: resultOf(),
        reverted: [
          {
            object: "apps/Deployment:shop/web",
            path: "/spec/template/spec/containers/0/securityContext",
            kind: "added",
            manager: "kubectl-patch",
            operation: "Update",
            at: "2026-12-01T09:20:36Z",
            value: '{"privileged":true}',
            trusted: false,
            security: "privileged",
          },
          {
            object: "apps/Deployment:shop/web",
            path: "/spec/template/spec/containers/0/env/0/value",
            kind: "changed",
            manager: "kubectl-set",
            operation: "Update",
            value: "********",
            trusted: false,
          },
        ],
      }),
    );
    assert.match(out.summary, /#### ⚠️ Self-heal reverted 1 security-relevant change\n/);
    assert.ok(
      out.summary.includes(
        "| ⚠️ privileged | `deploy/web` `…/containers/0/securityContext` | `kubectl-patch` Update, 2026-12-01 09:20:36Z |",
      ),
    );
    assert.ok(
      out.summary.includes("| changed | `deploy/web` `…/containers/0/env/0/value` | `kubectl-set` Update |"),
    );
    assert.ok(out.summary.includes('- `deploy/web` `…/containers/0/securityContext`: `{"privileged":true}`'));
    assert.ok(out.summary.includes("- `deploy/web` `…/containers/0/env/0/value`: `********`"));
  });

  it("risky undeclared objects are listed, with the reset-button advice", () => {
    const out = checkRunOutput(
      input({
        riskyOrphans: [
          { object: "daemonset.apps/miner in shop", risk: "a DaemonSet runs on every node" },
          { object: "configmap/notes in shop" },
        ],
      }),
    );
    assert.match(
      out.summary,
      /#### ⚠️ 1 risky object not declared in Git\n\n- `daemonset.apps\/miner in shop`: a DaemonSet runs on every node\n/,
    );
    assert.doesNotMatch(out.summary, /configmap\/notes/);
    assert.match(out.summary, /admission control/);
  });

  it("without a result it reports the stored state", () => {
    assert.equal(checkRunOutput(input()).title, "Synced, Healthy");
    assert.equal(checkRunOutput(input({ state: stateOf({ syncStatus: "OutOfSync" }) })).title, "OutOfSync");
    const unknown = checkRunOutput(
      input({ state: stateOf({ syncStatus: "Unknown", health: undefined, lastSyncedRevision: undefined }) }),
    );
    assert.equal(unknown.title, "Unknown");
    assert.match(unknown.summary, /- \*\*Sync Status:\*\* Unknown\n- \*\*Health Status:\*\* Unknown/);
    const stuck = checkRunOutput(
      input({
        state: stateOf({
          syncStatus: "OutOfSync",
          stuck: { revision: SHA, reason: "image pull backoff", since: "2024-05-01T12:00:00Z" },
        }),
      }),
    );
    assert.equal(stuck.title, "Stuck at a1b2c3d");
    assert.match(
      stuck.summary,
      /- \*\*Stuck:\*\* at `a1b2c3d` since 2024-05-01 12:00:00Z: image pull backoff/,
    );
    assert.equal(conclusionFor(undefined), "neutral");
  });

  it("shows the effective policy as given (frozen)", () => {
    const out = checkRunOutput(
      input({ effectivePolicy: "Frozen by @alice since 2024-05-01 12:00Z (release night)" }),
    );
    assert.match(
      out.summary,
      /^- \*\*Sync Policy:\*\* Frozen by `@alice` since 2024-05-01 12:00Z \(release night\)$/m,
    );
  });

  it("keeps titles to one short line", () => {
    const result = resultOf({
      phase: "Refused",
      message: `a\nvery ${"long ".repeat(100)}reason`,
      resources: [],
    });
    const { title } = checkRunOutput(input({ result }));
    assert.ok(title.length <= 120);
    assert.ok(!title.includes("\n"));
    assert.ok(title.endsWith("…"));
  });
});

describe("checkRunOutput: markdown safety", () => {
  it("escapes pipes, newlines and HTML in table cells", () => {
    const evil = resource({
      name: "web",
      status: "Failed",
      action: "failed",
      message: "admission webhook said: a|b\nsecond line <!-- hidden --> <details>",
    });
    const out = checkRunOutput(input({ result: resultOf({ phase: "Failed", resources: [evil] }) }));
    const row = out.summary.split("\n").find((l) => l.startsWith("| Deployment | shop | web |"))!;
    assert.equal(row, "| Deployment | shop | web | Failed | Healthy | admission webhook said: a\\|b … |");
    // The whole message, once, with its line breaks, in Errors.
    assert.ok(
      out.summary.includes("```\nadmission webhook said: a|b\nsecond line <!-- hidden --> <details>\n```"),
    );
    assert.equal(row.replaceAll("\\|", "").split("|").length, 8, "six cells");
    assert.doesNotMatch(out.summary.replace(/```\n[\s\S]*?\n```/g, ""), /<!--/, "only inside the fence");
  });

  it("puts the diff in a details block, with a fence the diff cannot close", () => {
    const out = checkRunOutput(input({ result: resultOf(), diff: DIFF }));
    assert.ok(
      out.summary.includes(
        `<details><summary>Diff</summary>\n\n\`\`\`diff\n${DIFF.trimEnd()}\n\`\`\`\n\n</details>`,
      ),
    );
    const tricky = "+ data:\n+   README.md: |\n+     ```sh\n+     make\n+     ```\n";
    const out2 = checkRunOutput(input({ result: resultOf(), diff: tricky }));
    assert.ok(out2.summary.includes("````diff\n+ data:"), "a four-backtick fence");
    assert.ok(out2.summary.includes("     ```\n````\n"));
    assert.doesNotMatch(checkRunOutput(input({ diff: "  \n" })).summary, /<details>/, "no empty diff block");
  });

  it("shows the last 5 history entries, newest first", () => {
    const out = checkRunOutput(input({ state: stateOf({ history: history(8) }) }));
    const rows = out.summary.split("\n").filter((l) => /^\| \d+ \|/.test(l));
    assert.deepEqual(
      rows.map((r) => r.split(" | ")[0]),
      ["| 8", "| 7", "| 6", "| 5", "| 4"],
    );
    // The commit's title recorded at sync time, next to its SHA.
    assert.equal(
      rows[0],
      "| 8 | 2024-05-08 10:00:00Z | `8888888` api: retry on 503 | selfHeal | syncward | Succeeded |",
    );
    // Written by a committer: its pipe, mention, HTML and backticks are inert in the cell.
    assert.ok(
      rows.includes(
        "| 6 | 2024-05-06 10:00:00Z | `6666666` fix \\| `@mallory` &lt;b&gt;checkout&lt;/b&gt; \\`x\\` | selfHeal | syncward | Succeeded |",
      ),
      rows.join("\n"),
    );
    assert.ok(out.summary.indexOf("| 8 |") < out.summary.indexOf("| 4 |"));
    assert.match(out.summary, /#### History \(last 5\)/);
    // The text has every entry, with messages and counts; one written before titles were kept
    // shows its SHA alone.
    assert.match(
      out.text,
      /\| 1 \| 2024-05-01 10:00:42Z \| `1111111` \| push \| alice \| Succeeded \| \+0 ~1 -0 !0 \| operation 1 \|/,
    );
  });

  it("describes the operation, drifted fields and the environment in the text", () => {
    const result = resultOf({
      resources: [resource({ drifted: ["/spec/replicas", "/spec/template/spec/containers/0/image"] })],
    });
    const out = checkRunOutput(input({ result }));
    assert.match(out.text, /- \*\*Revision:\*\* `a1b2c3d4e5f60718293a4b5c6d7e8f9012345678`/);
    assert.match(out.text, /finished:\*\* 2024-05-01 12:01:05Z \(1m5s\)/);
    assert.match(
      out.text,
      /- `deployment\.apps\/web` in `shop`: `\/spec\/replicas`, `\/spec\/template\/spec\/containers\/0\/image`/,
    );
    assert.match(out.text, /- \*\*Source:\*\* `deploy\/prod` on `main`/);
    assert.match(out.text, /- \*\*Retry:\*\* 5 retries, backoff 5s × 2 up to 3m/);
    assert.match(out.text, /- \*\*Sync options:\*\* defaults$/m, "defaults are not listed");
    const custom = envConfig();
    const validateOff = checkRunOutput(
      input({
        result,
        env: envConfig({
          syncPolicy: {
            ...custom.syncPolicy,
            syncOptions: { ...custom.syncPolicy.syncOptions, Validate: false },
          },
        }),
      }),
    );
    assert.match(
      validateOff.text,
      /- \*\*Sync options:\*\* `Validate=false` \(the rest at their defaults\)$/m,
    );
    assert.match(out.text, /\n\n\*\*Next:\*\* nothing to do; comment `\/history prod` for earlier syncs\.$/);
  });
});

describe("checkRunOutput: sizes", () => {
  const MAX = 65535;
  const TOTALS = /\n\n---\n\*\*Totals:\*\* [^\n]*$/;

  it("cuts a huge diff at a line, keeping the table and totals; the history gives way to a pointer", () => {
    const line = "+  description: 漢字かな交じり文 😀 emoji and CJK at every boundary\n";
    const diff = line.repeat(Math.ceil(200_000 / byteLength(line)));
    const out = checkRunOutput(input({ result: resultOf(), diff, state: stateOf({ history: history(8) }) }));
    assert.ok(byteLength(out.summary) <= MAX, `summary is ${byteLength(out.summary)} bytes`);
    assert.ok(byteLength(out.text) <= MAX, `text is ${byteLength(out.text)} bytes`);
    assert.ok(byteLength(out.summary) > MAX - 2000, "uses the room it has");
    assert.match(
      out.summary,
      /<details><summary>Diff \(cut: `syncward app diff prod` shows all of it\)<\/summary>/,
    );
    assert.match(
      out.summary,
      /emoji and CJK at every boundary\n```\n\n<\/details>/,
      "cut at a line, block closed",
    );
    assert.match(out.summary, /_History: comment `\/history prod` or run `syncward app history prod`\._/);
    assert.ok(out.summary.endsWith("0 skipped; 2 writes."));
    // The summary could not hold the whole diff: the text continues it, and ends with what to do.
    assert.match(out.text, /### Diff/);
    assert.match(out.text, /\n\*\*Next:\*\* [^\n]+$/);
  });

  it("counts unchanged objects instead of listing them; the totals and errors survive", () => {
    const resources = [
      ...Array.from({ length: 3000 }, (_, i) =>
        resource({
          kind: "ConfigMap",
          group: "",
          name: `cm-${i}`,
          action: "unchanged",
          message: `configmap/cm-${i} unchanged 漢字`,
        }),
      ),
      resource({ name: "api", status: "Failed", action: "failed", message: "the error that must be seen" }),
    ];
    const result = resultOf({ phase: "Failed", message: "1 failed", resources });
    const out = checkRunOutput(input({ result, diff: DIFF }));
    assert.ok(byteLength(out.summary) <= MAX);
    assert.match(
      out.summary,
      /_3,000 unchanged objects not listed; `syncward app get prod` lists every object\._/,
    );
    assert.match(out.summary, /\| Deployment \| shop \| api \| Failed \|/);
    assert.match(
      out.summary,
      /\*\*Errors:\*\*\n- Failed: 1 failed\n- `deployment\.apps\/api` in `shop`: the error that must be seen\n/,
    );
    assert.match(out.summary, TOTALS);
  });

  it("closes the diff's fence and details before what follows when the cut falls inside them", () => {
    const failed = resource({ name: "api", status: "Failed", action: "failed", message: "boom" });
    const result = resultOf({ phase: "Failed", message: "1 failed", resources: [failed] });
    const diff = "-a\n+b\n".repeat(20_000);
    for (const max of [3000, 20_000, MAX]) {
      const out = checkRunOutput(input({ result, diff }), max);
      for (const [name, md] of [
        ["summary", out.summary],
        ["text", out.text],
      ] as const) {
        assert.ok(byteLength(md) <= max, `${name} at ${max}`);
        const fences = md.split("\n").filter((l) => /^`{3,}/.test(l)).length;
        assert.equal(fences % 2, 0, `${name} at ${max}: every code block closed`);
        assert.equal(
          md.split("<details>").length,
          md.split("</details>").length,
          `${name} at ${max}: details closed`,
        );
      }
      assert.match(out.summary, TOTALS, `totals last at ${max}`);
      assert.match(out.summary, /- `deployment\.apps\/api` in `shop`: boom/, `errors at ${max}`);
      assert.match(out.text, /\n\n\*\*Next:\*\* [^\n]+$/, `next at ${max}`);
    }
  });

  it("keeps the first line, errors and totals even when the limit is tiny", () => {
    const failed = resource({ name: "api", status: "Failed", action: "failed", message: "boom" });
    const result = resultOf({
      phase: "Failed",
      message: "1 failed",
      resources: [...resultOf().resources, failed],
    });
    const out = checkRunOutput(
      input({ result, diff: DIFF.repeat(50), state: stateOf({ history: history(5) }) }),
      900,
    );
    assert.ok(byteLength(out.summary) <= 900, `${byteLength(out.summary)}`);
    assert.ok(byteLength(out.text) <= 900);
    assert.ok(out.summary.startsWith("**prod** runs `a1b2c3d`"));
    assert.match(out.summary, /- `deployment\.apps\/api` in `shop`: boom/);
    assert.match(out.summary, TOTALS);
    assert.match(out.summary, /_History: comment `\/history prod`/, "a pointer where the history was");
    assert.match(out.text, /\*\*Next:\*\*/);
  });
});

describe("conclusionFor", () => {
  const table: Array<[string, Parameters<typeof conclusionFor>, string]> = [
    ["no operation", [undefined], "neutral"],
    ["succeeded", [resultOf()], "success"],
    ["succeeded with nothing to sync", [resultOf({ resources: [] })], "neutral"],
    [
      "succeeded but an object failed",
      [resultOf({ totals: { ...resultOf().totals, failed: 1 } })],
      "failure",
    ],
    ["failed", [resultOf({ phase: "Failed" })], "failure"],
    ["error", [resultOf({ phase: "Error" })], "failure"],
    ["refused", [resultOf({ phase: "Refused" })], "failure"],
    ["drift fight", [resultOf(), alert], "failure"],
    ["awaiting approval", [undefined, undefined, { revision: SHA }], "action_required"],
    [
      "awaiting approval after a dry run",
      [resultOf({ dryRun: true }), undefined, { revision: SHA }],
      "action_required",
    ],
    [
      "a refusal wins over awaiting approval",
      [resultOf({ phase: "Refused" }), undefined, { revision: SHA }],
      "failure",
    ],
  ];
  for (const [name, args, want] of table) it(name, () => assert.equal(conclusionFor(...args), want));
});

describe("annotationsFor", () => {
  it("chunks by 50 and skips problems without a file", () => {
    const problems = Array.from({ length: 123 }, (_, i) => ({
      file: i % 10 === 0 ? undefined : `deploy/app-${i}.yaml`,
      line: i % 3 === 0 ? undefined : i,
      message: `problem ${i}`,
    }));
    const chunks = annotationsFor(problems);
    const withFile = problems.filter((p) => p.file !== undefined).length;
    assert.equal(withFile, 110);
    assert.deepEqual(
      chunks.map((c) => c.length),
      [50, 50, 10],
    );
    assert.deepEqual(chunks[0]![0], {
      path: "deploy/app-1.yaml",
      start_line: 1,
      end_line: 1,
      annotation_level: "failure",
      message: "problem 1",
    });
    assert.deepEqual(chunks[0]![1], {
      path: "deploy/app-2.yaml",
      start_line: 2,
      end_line: 2,
      annotation_level: "failure",
      message: "problem 2",
    });
    // No line: the first line of the file.
    assert.equal(chunks[0]!.find((a) => a.message === "problem 3")!.start_line, 1);
  });

  it("normalizes paths and bad line numbers", () => {
    const [chunk] = annotationsFor([
      { file: "./.github/syncward.yml", line: 0, message: "a" },
      { file: "/deploy/x.yaml", line: 2.5, message: "b" },
    ]);
    assert.deepEqual(
      chunk!.map((a) => [a.path, a.start_line]),
      [
        [".github/syncward.yml", 1],
        ["deploy/x.yaml", 1],
      ],
    );
    assert.deepEqual(annotationsFor([]), []);
    assert.deepEqual(annotationsFor([{ message: "no file" }]), []);
  });
});

describe("prCommentBody", () => {
  it("starts with the hidden marker and has one row per environment", () => {
    const body = prCommentBody(
      [
        { env: "dev", status: "Synced", revision: SHA, checkUrl: "https://github.com/acme/shop/runs/1" },
        {
          env: "prod",
          status: "Waiting for approval",
          revision: SHA,
          note: "needs 2 approvals | @carol approved",
        },
        { env: "staging", status: "OutOfSync", revision: "" },
      ],
      "syncward:summary",
    );
    assert.ok(body.startsWith("<!-- syncward:summary -->\n"));
    assert.ok(body.includes(htmlMarker("syncward:summary")));
    const rows = body.split("\n").filter((l) => l.startsWith("| `"));
    assert.deepEqual(rows, [
      "| `dev` | Synced | `a1b2c3d` | [details](https://github.com/acme/shop/runs/1) |  |",
      "| `prod` | Waiting for approval | `a1b2c3d` |  | needs 2 approvals \\| `@carol` approved |",
      "| `staging` | OutOfSync |  |  |  |",
    ]);
    golden("pr-comment.md", body);
  });

  it("accepts a marker already in comment form and refuses one that would break out", () => {
    assert.equal(htmlMarker("<!-- syncward:summary -->"), "<!-- syncward:summary -->");
    assert.equal(htmlMarker(" syncward:summary "), "<!-- syncward:summary -->");
    assert.throws(() => htmlMarker("x --> <b>hi</b>"), /no "--"/);
    assert.throws(() => htmlMarker(""), /non-empty/);
  });

  it("says so when no environment is affected, and stays within a comment's size", () => {
    assert.match(prCommentBody([], "m"), /No environment is affected/);
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      env: `env-${i}`,
      status: "Synced",
      revision: SHA,
      note: "漢字".repeat(20),
    }));
    const body = prCommentBody(rows, "m");
    assert.ok(byteLength(body) <= 65536);
    assert.ok(body.startsWith("<!-- m -->"));
  });
});

describe("checkRunOutput: the project", () => {
  it("names the operator's project the environment deploys under, first", () => {
    const env = envConfig();
    const out = checkRunOutput(
      input({
        result: resultOf(),
        env: {
          ...env,
          project: {
            name: "team-a",
            clusterResourceWhitelist: [],
            namespaceResourceBlacklist: [],
            violations: [],
          },
        },
      }),
    );
    assert.match(out.summary, /^- \*\*Project:\*\* `team-a`\n- \*\*Sync Policy:\*\*/m);
    assert.doesNotMatch(checkRunOutput(input({ result: resultOf() })).summary, /Project:/);
  });
});
