// `syncward import-argo FILE` chooses by kind: an argocd-cm ConfigMap prints resourceCustomizations,
// an Application prints an environment, as before.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { importArgoCommand } from "../../../src/cli/commands/import-argo.ts";
import { EXIT } from "../../../src/cli/io.ts";

const argo = (name: string) => join(import.meta.dirname, "..", "..", "fixtures", "config", "argo", name);

async function run(argv: string[]): Promise<{ code: number; out: string; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await importArgoCommand(argv, {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    isTTY: false,
  });
  return { code, out: out.join("\n"), err };
}

describe("syncward import-argo", () => {
  test("argocd-cm.yaml prints resourceCustomizations for the operator's projects document, notes on stderr", async () => {
    const r = await run([argo("argocd-cm.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.match(r.out, /^# Imported from Argo CD's argocd-cm: the operator's custom health checks/);
    assert.match(r.out, /projects document \(ConfigMap syncward-projects, key projects\.yaml\)/);
    assert.match(r.out, /^resourceCustomizations:\n/m);
    assert.match(r.out, /^ {2}argoproj\.io\/Rollout:\n/m);
    assert.equal(r.err.length, 4);
  });

  test("an Application still prints an environment", async () => {
    const r = await run([argo("simple.yaml")]);
    assert.equal(r.code, EXIT.ok);
    assert.match(r.out, /paste under `environments:`/);
    assert.match(r.out, /^- name: /m);
  });
});
