// The shipped alerts as an on-call engineer meets them: each links its runbook section, and the
// section is there.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const RUNBOOKS = "https://github.com/syncward/syncward/blob/main/docs/operating/runbooks.md";

interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}

function alerts(): Rule[] {
  const rule = parse(
    readFileSync(join(ROOT, "deploy/components/monitoring/prometheus-rule.yaml"), "utf8"),
  ) as {
    spec: { groups: Array<{ rules: Rule[] }> };
  };
  return rule.spec.groups.flatMap((g) => g.rules);
}

/** GitHub's anchor of a Markdown heading: lowercase, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
  return new Set(
    markdown
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => anchorOf(l.replace(/^#+ /, ""))),
  );
}

describe("monitoring alerts", () => {
  it("computes GitHub's heading anchors", () => {
    assert.equal(anchorOf("SyncwardDown"), "syncwarddown");
    assert.equal(anchorOf("syncward could not start"), "syncward-could-not-start");
    assert.equal(anchorOf("Retry and stuck revisions"), "retry-and-stuck-revisions");
    assert.equal(anchorOf("Out-of-band changes: what drifts"), "out-of-band-changes-what-drifts");
  });

  it("gives every alert a runbook_url whose section exists in docs/operating/runbooks.md", () => {
    const sections = anchors(readFileSync(join(ROOT, "docs/operating/runbooks.md"), "utf8"));
    const list = alerts();
    assert.ok(list.length >= 8);
    for (const a of list) {
      const url = a.annotations?.runbook_url;
      assert.ok(url, `${a.alert} has a runbook_url`);
      assert.ok(url.startsWith(`${RUNBOOKS}#`), `${a.alert}: ${url} points at the runbooks`);
      const anchor = url.slice(RUNBOOKS.length + 1);
      assert.ok(sections.has(anchor), `${a.alert}: runbooks.md has no section #${anchor}`);
      assert.ok(a.annotations?.summary, `${a.alert} has a summary`);
    }
  });

  it("fires when a preview's teardown has not finished for long, counting the records once", () => {
    const stuck = alerts().find((a) => a.alert === "SyncwardPreviewTeardownStuck");
    assert.ok(stuck, "SyncwardPreviewTeardownStuck exists");
    assert.match(stuck.expr, /^max\(syncward_preview_teardowns_pending\) > 0$/);
  });

  it("fires when no replica is scraped at all", () => {
    const down = alerts().find((a) => a.alert === "SyncwardDown");
    assert.ok(down, "SyncwardDown exists");
    assert.match(down.expr, /^absent\(syncward_build_info\)$/);
  });
});
