// Operator secrets stay with their project (projects/grants.ts): a notify target names only a key
// its project grants, so one tenant cannot sign as another.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProjects } from "../../../src/projects/load.ts";
import { narrowEnvironment } from "../../../src/projects/narrow.ts";
import type { Project } from "../../../src/projects/types.ts";
import { envConfig } from "../../support/env.ts";

const [a, b] = parseProjects(
  `projects:
  - {name: team-a, repositories: [acme/a], destinations: [{namespace: a}], grants: {notifyKeys: [SYNCWARD_NOTIFY_A]}}
  - {name: team-b, repositories: [acme/b], destinations: [{namespace: b}], grants: {notifyKeys: [SYNCWARD_NOTIFY_B], chartRepositories: ["https://charts.b.example"]}}
`,
  "p.yaml",
).projects as [Project, Project];
const notify = (secretEnv: string) => ({ notify: [{ url: "https://hooks.example/x", secretEnv }] });

describe("grants", () => {
  it("a notify target naming another project's key is refused before any sync", () => {
    assert.deepEqual(narrowEnvironment(a, envConfig("a", notify("SYNCWARD_NOTIFY_B"))).project?.violations, [
      "notify[0].secretEnv SYNCWARD_NOTIFY_B is not granted to project team-a (grants.notifyKeys: SYNCWARD_NOTIFY_A): a repository signs only with the keys its project grants",
    ]);
    assert.deepEqual(
      narrowEnvironment(a, envConfig("a", notify("SYNCWARD_NOTIFY_A"))).project?.violations,
      [],
    );
  });

  it("a chart repository outside the project's grants is refused", () => {
    const chart = {
      source: { path: ".", chart: "x", repoURL: "https://charts.a.example", targetRevision: "1.0.0" },
    };
    assert.match(
      narrowEnvironment(b, envConfig("b", chart)).project?.violations[0] ?? "",
      /source\.repoURL https:\/\/charts\.a\.example is not granted to project team-b/,
    );
  });
});
