import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { importArgoCommand } from "../../../src/cli/commands/import-argo.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { AppProjectImportError, importArgoAppProject } from "../../../src/projects/argo-import.ts";
import { parseProjects } from "../../../src/projects/load.ts";

const FIXTURE = join(import.meta.dirname, "..", "..", "fixtures", "projects", "argo-appproject.yaml");

describe("import-argo of an AppProject", () => {
  const imported = importArgoAppProject(readFileSync(FIXTURE, "utf8"));

  it("keeps what syncward has, field by field", () => {
    const p = imported.project;
    assert.equal(p.name, "payments");
    assert.equal(p.description, "Payments team services");
    assert.deepEqual(p.repositories, ["acme/payments-*", "acme/ledger"]);
    assert.deepEqual(p.destinations, [
      { namespace: "payments-*", inCluster: true, serviceAccount: "payments-deployer" },
      { namespace: "payments-edge", context: "prod-eu", serviceAccount: "edge:deployer" },
      { namespace: "!payments-system" },
    ]);
    assert.deepEqual(p.clusterResourceWhitelist, [{ group: "", kind: "Namespace" }]);
    assert.deepEqual(p.namespaceResourceBlacklist, [
      { group: "", kind: "ResourceQuota" },
      { group: "", kind: "LimitRange" },
    ]);
    assert.deepEqual(
      p.syncWindows.map((w) => [w.kind, w.schedule, w.duration / 3_600_000, w.timeZone, w.manualSync]),
      [
        ["deny", "0 18 * * 5", 62, "Europe/Berlin", false],
        ["allow", "0 6 * * 1-5", 12, "UTC", true],
      ],
    );
  });

  it("says what it dropped and why", () => {
    assert.deepEqual(imported.notes, [
      'spec.sourceRepos[2] "https://gitlab.example.com/legacy/payments.git" is not a GitHub repository: dropped',
      "properties: select repositories by an organization custom property only the organization may set, if any",
      "spec.syncWindows[1] is limited to some namespaces in Argo CD; in syncward a project window holds every environment of the project",
      "spec.roles (Argo CD's project RBAC and tokens): syncward's commands use GitHub permissions (commands:, approval:)",
      "spec.orphanedResources: syncward always reports undeclared objects and never deletes them",
    ]);
  });

  it("prints a document that parses as a projects entry", () => {
    assert.match(imported.yaml, /^# Imported from Argo CD AppProject "payments": paste under `projects:`/);
    const file = parseProjects(`projects:\n${imported.yaml}`, "pasted.yaml");
    assert.deepEqual(file.projects[0], imported.project);
  });

  it("refuses a negated source repository rather than widening the project", () => {
    const text = readFileSync(FIXTURE, "utf8").replace(
      "    - git@github.com:acme/ledger.git",
      "    - '!https://github.com/acme/payments-secret'",
    );
    assert.throws(
      () => importArgoAppProject(text),
      (err: unknown) =>
        err instanceof AppProjectImportError &&
        /spec\.sourceRepos\[1\] "!https:\/\/github\.com\/acme\/payments-secret": syncward has no negated repositories/.test(
          err.message,
        ),
    );
  });

  it("`syncward import-argo appproject.yaml` prints it, notes on stderr", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await importArgoCommand([FIXTURE], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      isTTY: false,
    });
    assert.equal(code, 0);
    assert.match(out.join("\n"), /^- name: payments$/m);
    assert.equal(err.length, imported.notes.length);
    await assert.rejects(importArgoCommand([], { out() {}, err() {}, isTTY: false }), UsageError);
  });
});
