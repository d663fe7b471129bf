import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { EnvironmentConfig } from "../../../src/config/types.ts";
import { projectKindProblem, projectViolations } from "../../../src/engine/project-limits.ts";
import { parseProjects } from "../../../src/projects/load.ts";
import { narrowEnvironment } from "../../../src/projects/narrow.ts";
import type { Project } from "../../../src/projects/types.ts";
import { evaluateWindows } from "../../../src/reconciler/sync-windows.ts";
import { envConfig } from "../../support/env.ts";

const org = parseProjects(
  readFileSync(join(import.meta.dirname, "..", "..", "fixtures", "projects", "org.yaml"), "utf8"),
  "org.yaml",
);
const teamA = org.projects[0] as Project;
const project = (yaml: string) => parseProjects(yaml, "p.yaml").projects[0] as Project;
const env = (ns: string, fields: Record<string, unknown> = {}) => envConfig(ns, fields);

describe("a repository can only narrow its project", () => {
  const destinations: Array<[string, EnvironmentConfig, string[]]> = [
    ["a namespace inside the glob", env("team-a-dev"), []],
    [
      "kube-system",
      env("kube-system"),
      [
        `destination.namespace "kube-system" is outside project team-a (destinations[].namespace on syncward's own cluster: team-a-*, !team-a-system)`,
      ],
    ],
    [
      "a namespace the project denies with !",
      env("team-a-system"),
      [
        'destination.namespace "team-a-system" is denied by project team-a (destinations[].namespace: !team-a-system)',
      ],
    ],
    [
      "another team's namespace in policy.namespaces",
      env("team-a-dev", { policy: { namespaces: ["team-a-dev", "team-b-dev"] } }),
      [
        `policy.namespaces "team-b-dev" is outside project team-a (destinations[].namespace on syncward's own cluster: team-a-*, !team-a-system)`,
      ],
    ],
    [
      "a context only one destination allows",
      env("shared-ingress", { destination: { namespace: "shared-ingress", context: "prod-eu" } }),
      [],
    ],
    [
      "in-cluster, which no destination names",
      env("team-a-dev", { destination: { namespace: "team-a-dev", inCluster: true } }),
      [],
    ],
  ];
  for (const [name, given, expected] of destinations) {
    it(`destination: ${name}`, () => {
      assert.deepEqual(narrowEnvironment(teamA, given).project?.violations, expected);
    });
  }

  it("a context outside every destination is named with the project's destinations", () => {
    const p = project(
      "projects: [{name: p, repositories: [o/*], destinations: [{namespace: '*', context: staging}]}]",
    );
    const e = env("x", { destination: { namespace: "x", context: "prod" } });
    assert.deepEqual(projectViolations(narrowEnvironment(p, e)), [
      'environment dev: destination cluster "prod" is not a destination of project p (its destinations: * on cluster staging)',
    ]);
  });

  it("picks the ServiceAccount of the first destination matching the namespace", () => {
    assert.deepEqual(narrowEnvironment(teamA, env("team-a-dev")).project?.serviceAccount, {
      namespace: "team-a-dev",
      name: "deployer",
    });
    const ingress = env("shared-ingress", {
      destination: { namespace: "shared-ingress", context: "prod-eu" },
    });
    assert.deepEqual(narrowEnvironment(teamA, ingress).project?.serviceAccount, {
      namespace: "ingress",
      name: "deployer",
    });
  });

  it("floors: production gets the project's approvals, every environment signed commits", () => {
    const prod = narrowEnvironment(
      teamA,
      env("team-a-prod", { production: true, approval: { minimum: 1, users: ["alice"] } }),
    );
    assert.deepEqual(prod.approval, {
      users: ["alice"],
      teams: [],
      minimum: 2,
      allowAuthor: false,
      trustedBots: [],
    });
    assert.equal(prod.policy.requireSignedCommits, true);
    const dev = narrowEnvironment(teamA, env("team-a-dev"));
    assert.equal(dev.approval, undefined);
    assert.equal(dev.policy.requireSignedCommits, true);
    assert.equal(dev.project?.forkPreviews, "never");
    const stricter = narrowEnvironment(
      teamA,
      env("team-a-prod", { production: true, approval: { minimum: 3 } }),
    );
    assert.equal(stricter.approval?.minimum, 3, "the repository's stricter rule stays");
  });

  it("floors: the operator's and the project's, the stricter wins", () => {
    const prod = narrowEnvironment(teamA, env("team-a-prod", { production: true }), [
      { source: "SYNCWARD_MIN_PRODUCTION_APPROVALS", minProductionApprovals: 4 },
    ]);
    assert.equal(prod.approval?.minimum, 4);
  });

  it("kinds: the project's blacklist and whitelist, with *", () => {
    const e = narrowEnvironment(teamA, env("team-a-dev"));
    assert.equal(
      projectKindProblem(e, "ingress/web", "networking.k8s.io", "Ingress", true),
      'ingress/web: kind Ingress is denied by project team-a (namespaceResourceBlacklist: {group: "networking.k8s.io", kind: *})',
    );
    assert.equal(projectKindProblem(e, "deployment.apps/web", "apps", "Deployment", true), undefined);
    assert.equal(projectKindProblem(e, "namespace/x", "", "Namespace", false), undefined);
    assert.equal(
      projectKindProblem(
        e,
        "clusterrole.rbac.authorization.k8s.io/x",
        "rbac.authorization.k8s.io",
        "ClusterRole",
        false,
      ),
      'clusterrole.rbac.authorization.k8s.io/x: cluster-scoped kind ClusterRole is not allowed by project team-a (clusterResourceWhitelist: {group: "", kind: Namespace})',
    );
    assert.equal(
      projectKindProblem(env("x"), "namespace/x", "", "Namespace", false),
      undefined,
      "no project: no limit",
    );
  });

  it("windows: a project's deny window holds a repository that has none", () => {
    const e = narrowEnvironment(teamA, env("team-a-dev"));
    // Friday 23:00 in Berlin: inside the project's weekend freeze.
    const d = evaluateWindows(e.syncWindows, new Date("2026-12-04T22:00:00Z"), false);
    assert.equal(d.allowed, false);
    assert.match(
      d.reason,
      /^blocked by deny window #0 "0 22 \* \* 5" for 60h \(Europe\/Berlin\) of project team-a/,
    );
  });

  it("windows: the project's allow windows and the repository's are intersected, not united", () => {
    const p = project(
      "projects: [{name: p, repositories: [o/*], destinations: [{namespace: '*'}], syncWindows: [{kind: allow, schedule: '0 9 * * *', duration: 8h}]}]",
    );
    const e = narrowEnvironment(
      p,
      env("x", { syncWindows: [{ kind: "allow", schedule: "0 15 * * *", duration: "8h" }] }),
    );
    const at = (iso: string) => evaluateWindows(e.syncWindows, new Date(iso), false);
    assert.equal(at("2026-12-01T16:00:00Z").allowed, true, "both open");
    const repoOnly = at("2026-12-01T20:00:00Z");
    assert.equal(repoOnly.allowed, false, "only the repository's window is open");
    assert.match(repoOnly.reason, /of project p.*\(project p\)/);
    assert.equal(at("2026-12-01T10:00:00Z").allowed, false, "only the project's window is open");
  });
});

describe("projects name clusters", () => {
  const p = project(
    "projects: [{name: p, repositories: [o/*], destinations: [{namespace: 'app-*', cluster: 'dev-*'}]}]",
  );
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ["a cluster the glob covers", { namespace: "app-a", cluster: "dev-east" }, []],
    [
      "a cluster it leaves out",
      { namespace: "app-a", cluster: "prod-east" },
      [
        'environment dev: destination cluster "prod-east" is not a destination of project p (its destinations: app-* on cluster dev-*)',
      ],
    ],
    [
      "the same cluster spelled as a context",
      { namespace: "app-a", context: "prod-east" },
      [
        'environment dev: destination cluster "prod-east" is not a destination of project p (its destinations: app-* on cluster dev-*)',
      ],
    ],
    [
      "syncward's own cluster (no name)",
      { namespace: "app-a" },
      [
        "environment dev: destination syncward's own cluster is not a destination of project p (its destinations: app-* on cluster dev-*)",
      ],
    ],
  ];
  for (const [what, destination, violations] of cases)
    it(what, () => {
      const e = env(String(destination.namespace), { destination });
      assert.deepEqual(projectViolations(narrowEnvironment(p, e)), violations);
    });

  it("a project's context glob matches a destination.cluster of that name too", () => {
    const q = project(
      "projects: [{name: q, repositories: [o/*], destinations: [{namespace: '*', context: staging}]}]",
    );
    const e = env("x", { destination: { namespace: "x", cluster: "staging" } });
    assert.deepEqual(projectViolations(narrowEnvironment(q, e)), []);
  });
});
