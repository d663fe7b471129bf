// What a change of the configuration would do per environment, and which guards it loosens.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { configChanges } from "../../../src/config/config-changes.ts";
import { parseConfig } from "../../../src/config/load.ts";

const prod = {
  name: "prod",
  source: { path: "prod" },
  destination: { namespace: "shop-prod" },
  production: true,
  syncPolicy: { automated: { prune: true } },
  approval: { users: ["carol"], teams: ["acme/sre"], minimum: 2 },
  policy: { requireSignedCommits: true },
};
const config = (...environments: object[]) => parseConfig(stringify({ environments }));
const before = config(prod);

describe("configChanges: guards a change loosens", () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["approval removed", { approval: undefined }, /^approval removed/],
    [
      "fewer approvals",
      { approval: { ...prod.approval, minimum: 1 } },
      /approval\.minimum lowered from 2 to 1/,
    ],
    [
      "an approver added",
      { approval: { ...prod.approval, users: ["carol", "mallory"] } },
      /approvers added: mallory/,
    ],
    ["authors may approve", { approval: { ...prod.approval, allowAuthor: true } }, /allowAuthor turned on/],
    ["no longer production", { production: false }, /no longer marked production/],
    ["previews on a production environment", { previews: true }, /previews turned on/],
    ["allowEmpty", { syncPolicy: { automated: { prune: true, allowEmpty: true } } }, /allowEmpty turned on/],
    [
      "a namespace allowed",
      { policy: { namespaces: ["shop-prod", "kube-system"], requireSignedCommits: true } },
      /namespaces allowed: kube-system/,
    ],
    [
      "a cluster kind allowed",
      {
        policy: {
          clusterResources: [{ group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding" }],
          requireSignedCommits: true,
        },
      },
      /cluster-scoped kinds allowed: rbac\.authorization\.k8s\.io\/ClusterRoleBinding/,
    ],
    ["signatures off", { policy: { requireSignedCommits: false } }, /requireSignedCommits turned off/],
    ["a command opened up", { commands: { sync: "read" } }, /\/sync now needs read permission \(was write\)/],
    [
      "another namespace",
      { destination: { namespace: "kube-system" } },
      /destination namespace moves to kube-system/,
    ],
    [
      "another cluster",
      { destination: { namespace: "shop-prod", context: "other" } },
      /destination cluster changes/,
    ],
  ];
  for (const [name, change, expected] of cases) {
    it(name, () => {
      const [c] = configChanges(before, config({ ...prod, ...change }));
      assert.equal(c?.kind, "changed");
      assert.ok(
        c?.weakens.some((w) => expected.test(w)),
        `${JSON.stringify(c?.weakens)} should match ${expected}`,
      );
    });
  }

  it("tightening a guard loosens nothing", () => {
    const [c] = configChanges(before, config({ ...prod, approval: { ...prod.approval, minimum: 3 } }));
    assert.deepEqual(c?.weakens, []);
    assert.deepEqual(c?.fields, [
      'approval: {"users":["carol"],"teams":["acme/sre"],"minimum":2,"allowAuthor":false,"trustedBots":[]} -> {"users":["carol"],"teams":["acme/sre"],"minimum":3,"allowAuthor":false,"trustedBots":[]}',
    ]);
  });

  it("an unchanged environment is not listed", () => {
    assert.deepEqual(configChanges(before, config(prod)), []);
  });
});

describe("configChanges: loosening the third review found unflagged", () => {
  const guarded = {
    ...prod,
    approval: { ...prod.approval, expiresAfter: "1h" },
    requireChecks: ["ci"],
    syncWindows: [{ kind: "deny", schedule: "0 22 * * *", duration: "8h" }],
  };
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      "a trusted bot",
      { approval: { ...guarded.approval, trustedBots: ["acme-release[bot]"] } },
      /trusted bots added: acme-release\[bot\]/,
    ],
    ["approvers emptied", { approval: { minimum: 2, expiresAfter: "1h" } }, /approvers emptied/],
    ["expiry removed", { approval: prod.approval }, /expiresAfter removed/],
    ["expiry raised", { approval: { ...prod.approval, expiresAfter: "48h" } }, /expiresAfter raised/],
    ["checks removed", { requireChecks: undefined }, /requireChecks removed/],
    [
      "a check unpinned",
      { requireChecks: [{ name: "ci", app: "github-actions" }] },
      /no longer required: ci/,
    ],
    ["deny window removed", { syncWindows: [] }, /deny sync windows removed or changed: 0 22 \* \* \*/],
  ];
  for (const [name, change, expected] of cases)
    it(name, () => {
      const [c] = configChanges(config(guarded), config({ ...guarded, ...change }));
      assert.ok(
        c?.weakens.some((w) => expected.test(w)),
        `${JSON.stringify(c?.weakens)} should match ${expected}`,
      );
    });
  it("a new environment writing another's namespace shows it", () => {
    const added = configChanges(
      before,
      config(prod, {
        name: "tools",
        source: { path: "t" },
        destination: { namespace: "tools" },
        policy: { namespaces: ["tools", "shop-prod"] },
      }),
    );
    assert.ok(added.find((c) => c.env === "tools")?.fields.includes('namespaces: ["tools","shop-prod"]'));
  });
});

describe("configChanges: every weakening of drift and prune is a loosening", () => {
  const healed = {
    ...prod,
    syncPolicy: { automated: { prune: true, selfHeal: true } },
    trustedManagers: [{ manager: "my-autoscaler", paths: ["/spec/replicas"] }],
    ignoreDifferences: [{ group: "apps", kind: "Deployment", jsonPointers: ["/spec/replicas"] }],
  };
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      "trustedManagers: a wildcard name",
      { trustedManagers: ["*"] },
      /trustedManagers widened: \* \(replicas, labels, annotations\)/,
    ],
    [
      "trustedManagers: more paths for a pair",
      { trustedManagers: [{ manager: "my-autoscaler", paths: ["/spec/replicas", "/spec/template"] }] },
      /trustedManagers widened: my-autoscaler for \/spec\/replicas, \/spec\/template/,
    ],
    [
      "ignoreDifferences on the pod template",
      {
        ignoreDifferences: [
          ...healed.ignoreDifferences,
          { group: "apps", kind: "Deployment", jsonPointers: ["/spec/template/spec"] },
        ],
      },
      /ignoreDifferences widened: apps\/Deployment ignores \/spec\/template\/spec/,
    ],
    [
      "ignoreDifferences: a jq expression",
      { ignoreDifferences: [{ group: "apps", kind: "Deployment", jqPathExpressions: [".spec.template"] }] },
      /ignoreDifferences widened: apps\/Deployment ignores \.spec\.template/,
    ],
    [
      "managedFieldsManagers",
      { ignoreDifferences: [{ group: "*", kind: "*", managedFieldsManagers: ["kubectl-edit"] }] },
      /managedFieldsManagers widened: \*\/\* ignores every field of kubectl-edit/,
    ],
    ["selfHeal off", { syncPolicy: { automated: { prune: true, selfHeal: false } } }, /selfHeal turned off/],
    ["automation off (no self-heal either)", { syncPolicy: {} }, /selfHeal turned off/],
    ["prune off", { syncPolicy: { automated: { prune: false, selfHeal: true } } }, /prune turned off/],
    [
      "Replace=true",
      { syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["Replace=true"] } },
      /Replace=true turned on/,
    ],
    [
      "RespectIgnoreDifferences=true",
      {
        syncPolicy: {
          automated: { prune: true, selfHeal: true },
          syncOptions: ["RespectIgnoreDifferences=true"],
        },
      },
      /RespectIgnoreDifferences=true turned on/,
    ],
    [
      "Validate=false",
      { syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["Validate=false"] } },
      /Validate=false/,
    ],
    ["a command lowered", { commands: { approve: "read" } }, /\/approve now needs read permission/],
    [
      "policy.namespaces widened",
      { policy: { namespaces: ["shop-prod", "shop-other"], requireSignedCommits: true } },
      /namespaces allowed: shop-other/,
    ],
  ];
  for (const [name, change, expected] of cases)
    it(name, () => {
      const [c] = configChanges(config(healed), config({ ...healed, ...change }));
      assert.ok(
        c?.weakens.some((w) => expected.test(w)),
        `${JSON.stringify(c?.weakens)} should match ${expected}`,
      );
    });

  it("narrowing them loosens nothing", () => {
    const [c] = configChanges(
      config(healed),
      config({ ...healed, trustedManagers: [], ignoreDifferences: [] }),
    );
    assert.deepEqual(c?.weakens, []);
  });
});

describe("configChanges: environments added and removed", () => {
  it("a new environment is outlined", () => {
    const dev = { name: "dev", source: { path: "dev" }, destination: { namespace: "shop-dev" } };
    const changes = configChanges(before, config(prod, dev));
    assert.deepEqual(changes, [
      {
        env: "dev",
        kind: "added",
        fields: ['destination: {"namespace":"shop-dev","inCluster":false}', "sync: manual"],
        weakens: [],
      },
    ]);
  });

  it("removing a guarded environment is flagged", () => {
    const dev = { name: "dev", source: { path: "dev" }, destination: { namespace: "shop-dev" } };
    const changes = configChanges(before, config(dev));
    const removed = changes.find((c) => c.kind === "removed");
    assert.equal(removed?.env, "prod");
    assert.deepEqual(removed?.weakens, ["a guarded environment is removed"]);
  });

  it("without a configuration before, every environment is added", () => {
    assert.deepEqual(
      configChanges(undefined, before).map((c) => [c.env, c.kind]),
      [["prod", "added"]],
    );
  });
});

describe("configChanges: another environment writing where a guarded one deploys", () => {
  const dev = { name: "dev", source: { path: "dev" }, destination: { namespace: "shop-dev" } };
  it("a new environment whose destination is prod's namespace loosens prod", () => {
    const [added] = configChanges(before, config(prod, { ...dev, destination: { namespace: "shop-prod" } }));
    assert.equal(added?.kind, "added");
    assert.deepEqual(added?.weakens, ["writes into prod's namespace shop-prod without prod's guards"]);
    assert.deepEqual(added?.intoGuarded, ["prod"]);
  });

  it("an environment that now lists prod's namespace in policy.namespaces loosens prod", () => {
    const was = config(prod, dev);
    const [changed] = configChanges(
      was,
      config(prod, { ...dev, policy: { namespaces: ["shop-dev", "shop-prod"] } }),
    );
    assert.match(changed?.weakens.join("; ") ?? "", /writes into prod's namespace shop-prod/);
    assert.deepEqual(changed?.intoGuarded, ["prod"]);
  });

  it("the same namespace on another cluster, or a place it already had, is no loosening", () => {
    const otherCluster = { ...dev, destination: { namespace: "shop-prod", cluster: "dev-eu" } };
    assert.deepEqual(
      configChanges(before, config(prod, otherCluster)).flatMap((c) => c.intoGuarded ?? []),
      [],
    );
    const already = config(prod, { ...dev, policy: { namespaces: ["shop-dev", "shop-prod"] } });
    assert.deepEqual(
      configChanges(already, already).flatMap((c) => c.intoGuarded ?? []),
      [],
    );
  });
});
