import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError } from "../../../src/config/config-error.ts";
import { previewEnvironmentOf } from "../../../src/config/preview.ts";
import { parseProjects } from "../../../src/projects/load.ts";
import { placePreview } from "../../../src/projects/previews.ts";
import type { Project } from "../../../src/projects/types.ts";
import { envConfig } from "../../support/env.ts";

const project = (yaml: string) => parseProjects(yaml, "p.yaml").projects[0] as Project;
const PROJECT = `
projects:
  - name: payments
    repositories: [acme/payments]
    destinations:
      - {cluster: dev, namespace: "payments-*"}
      - {cluster: prod, namespace: "payments*", production: true}
    previews:
      allowed: true
      destinations: [{cluster: dev, namespace: "payments-pr-*"}]
      resourceQuota: {hard: {pods: 20, limits.memory: 4Gi}}
      limitRange: {limits: [{type: Container, default: {memory: 256Mi}}]}
      maxPerRepository: 2
`;
const TEMPLATE = {
  from: "dev",
  namespace: "payments-pr-{number}",
  trigger: "label" as const,
  label: "preview",
  ttl: 3_600_000,
  permission: "write" as const,
};
const PR = { number: 7, branch: "feature", sha: "a".repeat(40) };
const devOn = (cluster: string, fields: Record<string, unknown> = {}) =>
  envConfig("payments-dev", { destination: { cluster, namespace: "payments-dev" }, ...fields });

function problemsOf(yaml: string): string {
  try {
    parseProjects(yaml, "p.yaml");
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  return "";
}

describe("a project's previews", () => {
  it("parse with their defaults; quantities as strings", () => {
    const previews = project(PROJECT).previews;
    assert.deepEqual(previews?.resourceQuota, { hard: { pods: "20", "limits.memory": "4Gi" } });
    assert.equal(previews?.maxPerRepository, 2);
    assert.equal(previews?.maxPerInstallation, 20);
  });

  it("are absent unless the operator writes them", () => {
    assert.equal(
      project("projects: [{name: p, repositories: [acme/x], destinations: [{namespace: x}]}]").previews,
      undefined,
    );
  });

  const refused: Array<[string, string, RegExp]> = [
    [
      "allowed without a destination",
      "previews: {allowed: true}",
      /previews\.destinations.*must list where previews may run/,
    ],
    [
      "a production preview destination",
      "previews: {allowed: true, destinations: [{namespace: 'x-*', production: true}]}",
      /a preview destination cannot be production/,
    ],
    [
      "an unknown field",
      "previews: {allowed: true, destinations: [{namespace: x}], max: 3}",
      /previews\.max.*unknown field/,
    ],
  ];
  for (const [what, yaml, expected] of refused) {
    it(`refuse ${what}`, () => {
      assert.match(
        problemsOf(
          `projects:\n  - name: p\n    repositories: [acme/x]\n    destinations: [{namespace: x}]\n    ${yaml}\n`,
        ),
        expected,
      );
    });
  }
});

describe("placePreview: where a preview may run", () => {
  const payments = project(PROJECT);

  it("runs where the operator's preview destinations allow", () => {
    const placed = placePreview(payments, previewEnvironmentOf(TEMPLATE, devOn("dev"), PR));
    assert.ok(placed.allowed, placed.allowed ? "" : placed.reason);
    assert.equal(placed.env.destination.namespace, "payments-pr-7");
    assert.equal(placed.env.project?.name, "payments");
    assert.equal(placed.limits.maxPerRepository, 2);
  });

  const cases: Array<[string, Project | undefined, Record<string, unknown>, string, RegExp]> = [
    ["no project", undefined, {}, "dev", /belongs to no project/],
    [
      "a project without previews",
      project(PROJECT.replace(/ {4}previews:[\s\S]*$/, "")),
      {},
      "dev",
      /does not allow previews/,
    ],
    [
      "previews not allowed",
      project(PROJECT.replace("allowed: true", "allowed: false")),
      {},
      "dev",
      /does not allow previews/,
    ],
    [
      "a cluster previews may not use",
      payments,
      {},
      "staging",
      /the preview's destination cluster "staging" is not a destination of project payments/,
    ],
    [
      "a namespace outside the preview pattern",
      payments,
      { namespace: "payments-{number}" },
      "dev",
      /destination.namespace "payments-7" is outside project payments/,
    ],
    ["a preview destination on the project's production destination", payments, {}, "prod", /is production/],
  ];
  for (const [what, p, template, cluster, expected] of cases) {
    it(`refuses ${what}`, () => {
      const preview = previewEnvironmentOf({ ...TEMPLATE, ...template }, devOn(cluster), PR);
      const widened =
        cluster === "prod" && p
          ? {
              ...p,
              previews: {
                ...(p.previews as NonNullable<Project["previews"]>),
                destinations: [{ cluster: "prod", namespace: "*" }],
              },
            }
          : p;
      const placed = placePreview(widened, preview);
      assert.equal(placed.allowed, false);
      assert.match(placed.allowed ? "" : placed.reason, expected);
    });
  }

  it("refuses where the project is production throughout", () => {
    const production = project(
      PROJECT.replace(
        "repositories: [acme/payments]",
        "repositories: [acme/payments]\n    floors: {production: true}",
      ),
    );
    const placed = placePreview(production, previewEnvironmentOf(TEMPLATE, devOn("dev"), PR));
    assert.equal(placed.allowed, false);
  });
});
