import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, parseConfig } from "../../../src/config/load.ts";
import { dnsSafeBranch, expandPreviewText, previewEnvironmentOf } from "../../../src/config/preview.ts";
import { namespaceTemplateProblem } from "../../../src/config/preview-schema.ts";
import type { PreviewTemplate } from "../../../src/config/types.ts";

const FILE = ".github/syncward.yml";
const ENVIRONMENTS = `
environments:
  - name: dev
    source: {path: deploy/overlays/dev, branch: main}
    destination: {cluster: dev-cluster, namespace: payments-dev}
    policy: {namespaces: [payments-dev, payments-shared]}
    syncPolicy: {automated: {prune: false, selfHeal: false}, syncOptions: [ServerSideApply=true]}
    notify: []
  - name: prod
    source: {path: deploy/overlays/prod, branch: main}
    destination: {cluster: prod-cluster, namespace: payments}
    approval: {users: [alice, bob], minimum: 1}
    production: true
`;
// The form the product documents, as written.
const DOCUMENTED = `${ENVIRONMENTS}
previewEnvironments:
  - from: dev                            # an environment whose source and policy the preview takes
    namespace: "payments-pr-{number}"    # {number}, {branch} (DNS-safe), {sha7} at least
    url: "https://pr-{number}.dev.example.com"
    trigger: label                       # label | comment | always
    label: preview                       # the label, for trigger: label
    ttl: 72h
`;

function problems(text: string): string[] {
  try {
    parseConfig(text, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => p.slice(FILE.length + 1).trim());
  }
  return [];
}

const PR = { number: 42, branch: "feature/Add_Payments", sha: "9E8D7C6B5A493827160504f3e2d1c0b9a8f7e6d5" };

describe("previewEnvironments: the documented form", () => {
  it("parses as written, with its defaults", () => {
    const config = parseConfig(DOCUMENTED, FILE);
    assert.deepEqual(config.previewEnvironments, [
      {
        from: "dev",
        namespace: "payments-pr-{number}",
        url: "https://pr-{number}.dev.example.com",
        trigger: "label",
        label: "preview",
        ttl: 72 * 3_600_000,
        permission: "write",
      },
    ]);
  });

  it("is optional: a config without it has none", () => {
    assert.equal(parseConfig(ENVIRONMENTS, FILE).previewEnvironments, undefined);
  });
});

describe("previewEnvironments: refused templates name the field", () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "an unknown environment",
      'from: staging\n    namespace: "p-{number}"',
      /previewEnvironments\[0\]\.from.*no environment named "staging" \(environments: dev, prod\)/,
    ],
    [
      "a gated, production environment",
      'from: prod\n    namespace: "p-{number}"',
      /previewEnvironments\[0\]\.from.*"prod" is gated by approval/,
    ],
    [
      "a namespace without {number}",
      'from: dev\n    namespace: "payments-preview"',
      /previewEnvironments\[0\]\.namespace.*must contain \{number\}/,
    ],
    [
      "an unknown placeholder",
      'from: dev\n    namespace: "p-{number}-{user}"',
      /unknown placeholder \{user\}/,
    ],
    [
      "a namespace that is no DNS label",
      'from: dev\n    namespace: "Payments_{number}"',
      /is not a namespace/,
    ],
    [
      "a ttl that is no duration",
      'from: dev\n    namespace: "p-{number}"\n    ttl: 3 days',
      /previewEnvironments\[0\]\.ttl.*duration/,
    ],
    [
      "an unknown trigger",
      'from: dev\n    namespace: "p-{number}"\n    trigger: push',
      /previewEnvironments\[0\]\.trigger.*"label", "comment" or "always"/,
    ],
    [
      "an unknown field",
      'from: dev\n    namespace: "p-{number}"\n    cluster: prod-cluster',
      /previewEnvironments\[0\]\.cluster.*unknown field/,
    ],
  ];
  for (const [what, body, expected] of cases) {
    it(what, () => {
      const found = problems(`${ENVIRONMENTS}\npreviewEnvironments:\n  - ${body}\n`);
      assert.ok(
        found.some((p) => expected.test(p)),
        `expected ${expected} among:\n${found.join("\n")}`,
      );
    });
  }

  it("two templates for one environment", () => {
    const found = problems(
      `${ENVIRONMENTS}\npreviewEnvironments:\n  - {from: dev, namespace: "a-{number}"}\n  - {from: dev, namespace: "b-{number}"}\n`,
    );
    assert.ok(
      found.some((p) => /previewEnvironments\[1\]\.from.*a second template for "dev"/.test(p)),
      found.join("\n"),
    );
  });

  it("an environment that is production without a gate", () => {
    const found = problems(
      `${ENVIRONMENTS.replace("    approval: {users: [alice, bob], minimum: 1}\n", "")}\npreviewEnvironments:\n  - {from: prod, namespace: "p-{number}"}\n`,
    );
    assert.ok(
      found.some((p) => /"prod" is production/.test(p)),
      found.join("\n"),
    );
  });
});

describe("namespaceTemplateProblem", () => {
  const table: Array<[string, string | undefined]> = [
    ["payments-pr-{number}", undefined],
    ["{branch}-{number}-{sha7}", undefined],
    ["pr-{number}", undefined],
    [`${"a".repeat(55)}-{number}`, undefined],
    [`${"a".repeat(56)}-{number}`, "is too long"],
    [`${"a".repeat(46)}-{number}-{branch}`, undefined],
    [`${"a".repeat(47)}-{number}-{branch}`, "is too long"],
    ["-pr-{number}", "is not a namespace"],
    ["pr-{number}.x", "is not a namespace"],
  ];
  for (const [template, expected] of table) {
    it(template, () => {
      const problem = namespaceTemplateProblem(template);
      if (expected === undefined) assert.equal(problem, undefined);
      else assert.match(problem ?? "", new RegExp(expected));
    });
  }
});

describe("expanding a template for a pull request", () => {
  it("replaces every placeholder; the branch DNS-safe", () => {
    assert.equal(expandPreviewText("payments-pr-{number}", PR), "payments-pr-42");
    assert.equal(expandPreviewText("{branch}-{sha7}", PR), "feature-add-payments-9e8d7c6");
  });

  it("cuts {branch} so that a namespace stays within 63 characters", () => {
    const long = { ...PR, branch: `renovate/${"x".repeat(80)}` };
    const ns = expandPreviewText("payments-pr-{number}-{branch}", long, 63);
    assert.equal(ns.length, 63);
    assert.match(ns, /^payments-pr-42-renovate-x+$/);
  });

  const branches: Array<[string, string]> = [
    ["main", "main"],
    ["Feature/Foo_Bar", "feature-foo-bar"],
    ["--x--", "x"],
    ["___", "pr"],
    ["dependabot/npm_and_yarn/lodash-4.17.21", "dependabot-npm-and-yarn-lodash-4-17-21"],
  ];
  for (const [branch, expected] of branches) {
    it(`dnsSafeBranch(${JSON.stringify(branch)})`, () => assert.equal(dnsSafeBranch(branch, 63), expected));
  }

  it("a cut never leaves a trailing dash", () => assert.equal(dnsSafeBranch("ab-cd", 3), "ab"));
});

describe("previewEnvironmentOf", () => {
  const config = parseConfig(DOCUMENTED, FILE);
  const template = config.previewEnvironments?.[0];
  const dev = config.environments[0];
  assert.ok(template && dev);
  const preview = previewEnvironmentOf(template, dev, PR);

  it("is named for the pull request and the environment", () => assert.equal(preview.name, "pr-42-dev"));

  it("renders the source environment's path at the pull request's head branch", () => {
    assert.equal(preview.source.path, "deploy/overlays/dev");
    assert.equal(preview.source.branch, PR.branch);
  });

  it("deploys into its own namespace on the source's cluster, and may write nowhere else", () => {
    assert.deepEqual(preview.destination, {
      cluster: "dev-cluster",
      inCluster: false,
      namespace: "payments-pr-42",
    });
    assert.deepEqual(preview.policy.namespaces, ["payments-pr-42"]);
    assert.deepEqual(preview.policy.clusterResources, []);
  });

  it("prunes and heals whatever the source does, and never creates its namespace in a sync", () => {
    assert.deepEqual(preview.syncPolicy.automated, { prune: true, selfHeal: true, allowEmpty: false });
    assert.equal(preview.syncPolicy.syncOptions.CreateNamespace, false);
    const creating = {
      ...dev,
      syncPolicy: {
        ...dev.syncPolicy,
        syncOptions: { ...dev.syncPolicy.syncOptions, CreateNamespace: true },
      },
    };
    assert.equal(previewEnvironmentOf(template, creating, PR).syncPolicy.syncOptions.CreateNamespace, false);
    assert.equal(preview.syncPolicy.syncOptions.ServerSideApply, true);
  });

  it("carries the URL, and neither a gate, production, notifications nor previews of its own", () => {
    assert.equal(preview.environmentUrl, "https://pr-42.dev.example.com");
    assert.equal(preview.approval, undefined);
    assert.equal(preview.production, false);
    assert.equal(preview.previews, false);
    assert.deepEqual(preview.notify, []);
  });

  it("leaves the source environment as it was", () => {
    assert.equal(dev.destination.namespace, "payments-dev");
    assert.deepEqual(dev.syncPolicy.automated, { prune: false, selfHeal: false, allowEmpty: false });
  });
});

describe("previewEnvironmentOf, for a preview that started at another head", () => {
  const config = parseConfig(DOCUMENTED, FILE);
  const dev = config.environments[0];
  const template = { ...config.previewEnvironments?.[0], namespace: "payments-pr-{number}-{sha7}" };
  assert.ok(dev && template.from);
  const started = { ...PR, sha: "a".repeat(40) };
  const moved = { ...PR, sha: "b".repeat(40) };
  const first = previewEnvironmentOf(template as PreviewTemplate, dev, started);

  it("a template naming the head would put the new head elsewhere", () =>
    assert.equal(
      previewEnvironmentOf(template as PreviewTemplate, dev, moved).destination.namespace,
      "payments-pr-42-bbbbbbb",
    ));

  it("the namespace it was given stays its own: destination and the only namespace it may write", () => {
    const resumed = previewEnvironmentOf(
      template as PreviewTemplate,
      dev,
      moved,
      first.destination.namespace,
    );
    assert.equal(resumed.destination.namespace, "payments-pr-42-aaaaaaa");
    assert.deepEqual(resumed.policy.namespaces, ["payments-pr-42-aaaaaaa"]);
  });
});
