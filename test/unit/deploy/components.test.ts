// deploy/components combined as an operator combines them in an overlay of deploy/, rendered with the
// real `kubectl kustomize` (no cluster): every combination renders, the same set renders the same
// objects in any order, and what syncward's ServiceAccount is granted is exactly what the chosen
// components say (expectedGrants below, written from their documentation, not from their YAML).
//
// Orders: every subset of the components that change RBAC in every order, and every subset of all
// of them in the directory's order and reversed. The others add objects and patch nothing (checked
// below), so where they stand cannot change what another renders. SYNCWARD_EVERY_COMPONENT_ORDER=1
// renders every subset of all of them in every order instead (1,957 renders for six components).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { parse, parseAllDocuments } from "yaml";

const DEPLOY = join(import.meta.dirname, "..", "..", "..", "deploy");
const COMPONENTS = readdirSync(join(DEPLOY, "components")).sort();
const SERVICE_ACCOUNT = { namespace: "syncward", name: "syncward" };

// --- what the components say ---------------------------------------------------------------------

const READ = ["get", "list", "watch"];
const WRITE = [...READ, "create", "update", "patch", "delete"];
/** The application kinds syncward syncs (deploy/rbac-manager.yaml), as group/resource. */
const APP_KINDS = [
  "core/configmaps",
  "core/secrets",
  "core/services",
  "core/serviceaccounts",
  "core/persistentvolumeclaims",
  "apps/deployments",
  "apps/statefulsets",
  "apps/daemonsets",
  "batch/jobs",
  "batch/cronjobs",
  "networking.k8s.io/ingresses",
  "networking.k8s.io/networkpolicies",
  "autoscaling/horizontalpodautoscalers",
  "policy/poddisruptionbudgets",
  "rbac.authorization.k8s.io/roles",
  "rbac.authorization.k8s.io/rolebindings",
];
const grant = (verbs: string[], resources: string[]) =>
  resources.flatMap((r) => verbs.map((v) => `${v} ${r}`));

interface Grants {
  /** What syncward holds in every namespace and cluster-wide: the ClusterRoles it is bound to. */
  clusterWide: string[];
  /** What it holds in a namespace only (RoleBindings), by namespace. */
  namespaced: Record<string, string[]>;
  /** ClusterRoles the operator binds per destination namespace (none bound by deploy/), by name. */
  toBind: Record<string, string[]>;
  /** Objects other than RBAC the components add to deploy/'s, as Kind/name. */
  added: string[];
}

/** The grants and objects a set of components promises, in any order. */
function expectedGrants(chosen: ReadonlySet<string>): Grants {
  const narrow = chosen.has("narrow-secrets");
  const impersonating = chosen.has("impersonation");
  const managed = APP_KINDS.filter((k) => !(narrow && k === "core/secrets"));
  const clusterWide = [
    // narrow-secrets: no Secret access of its own; impersonation: reads only, every write impersonates.
    ...grant(impersonating ? READ : WRITE, managed),
    ...grant(READ, ["core/pods", "apps/replicasets"]),
    ...grant(["get"], ["core/namespaces"]),
    ...grant(["list"], ["rbac.authorization.k8s.io/clusterrolebindings"]),
  ];
  if (chosen.has("cluster-resources"))
    clusterWide.push(
      ...grant(["create"], ["core/namespaces"]),
      ...grant(WRITE, ["apiextensions.k8s.io/customresourcedefinitions"]),
    );
  if (chosen.has("previews"))
    clusterWide.push(
      ...grant(["get", "create", "delete"], ["core/namespaces"]),
      ...grant(["get", "create", "patch"], ["core/resourcequotas", "core/limitranges"]),
    );
  const toBind: Record<string, string[]> = {};
  if (narrow) toBind["syncward-secrets"] = grant(WRITE, ["core/secrets"]);
  if (impersonating) {
    toBind["syncward-impersonate"] = grant(["impersonate"], ["core/serviceaccounts/deployer"]);
    toBind["syncward-deployer"] = grant(WRITE, APP_KINDS);
  }
  const added: string[] = [];
  if (chosen.has("network-policy")) added.push("NetworkPolicy/syncward");
  if (chosen.has("monitoring")) added.push("PodMonitor/syncward", "PrometheusRule/syncward");
  return {
    clusterWide: sorted(clusterWide),
    // syncward's own state, whatever the components: deploy/rbac-state.yaml; with previews, a
    // torn-down preview's state ConfigMap and Lease are deleted too.
    namespaced: {
      syncward: sorted([
        ...grant(["get", "list", "watch", "create", "update", "patch"], ["core/configmaps"]),
        ...grant(["get", "list", "watch", "create", "update"], ["coordination.k8s.io/leases"]),
        ...grant(READ, ["core/secrets"]),
        ...(chosen.has("previews")
          ? grant(["delete"], ["core/configmaps", "coordination.k8s.io/leases"])
          : []),
      ]),
    },
    toBind: Object.fromEntries(Object.entries(toBind).map(([k, v]) => [k, sorted(v)])),
    added: sorted(added),
  };
}

const sorted = (items: string[]) => [...new Set(items)].sort();

// --- what kustomize renders ----------------------------------------------------------------------

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Array<{ apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }>;
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

const RBAC = new Set(["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
const work = mkdtempSync(join(tmpdir(), "syncward-component-orders-"));
after(() => rmSync(work, { recursive: true, force: true }));
const execFileAsync = promisify(execFile);
let overlays = 0;

/** deploy/ with `components` in this order, in an overlay as an operator writes it. */
async function render(components: string[]): Promise<Obj[]> {
  const dir = join(work, String(overlays++));
  const rel = relative(dir, DEPLOY);
  const list = components.map((c) => `  - ${rel}/components/${c}\n`).join("");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "kustomization.yaml"),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [${rel}]\n${list ? `components:\n${list}` : ""}`,
  );
  const { stdout } = await execFileAsync("kubectl", ["kustomize", dir], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

function rulesOf(role: Obj): string[] {
  return (role.rules ?? []).flatMap((r) =>
    (r.apiGroups ?? []).flatMap((g) =>
      (r.resources ?? []).flatMap((res) =>
        (r.resourceNames ?? [""]).flatMap((n) =>
          r.verbs.map((v) => `${v} ${g || "core"}/${res}${n ? `/${n}` : ""}`),
        ),
      ),
    ),
  );
}

/** What the rendered objects grant syncward's ServiceAccount, in the shape of expectedGrants. */
function renderedGrants(objects: Obj[], base: Obj[]): Grants {
  const role = (kind: string, name: string, namespace?: string) => {
    const found = objects.find(
      (o) =>
        o.kind === kind &&
        o.metadata.name === name &&
        (kind === "ClusterRole" || o.metadata.namespace === namespace),
    );
    assert.ok(found, `${kind} ${name}, named by a binding, is rendered`);
    return rulesOf(found);
  };
  const clusterWide: string[] = [];
  const namespaced: Record<string, string[]> = {};
  const bound = new Set<string>();
  for (const b of objects.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    const ref = b.roleRef as { kind: string; name: string };
    if (ref.kind === "ClusterRole") bound.add(ref.name);
    const toUs = (b.subjects ?? []).some(
      (s) =>
        s.kind === "ServiceAccount" &&
        s.name === SERVICE_ACCOUNT.name &&
        s.namespace === SERVICE_ACCOUNT.namespace,
    );
    if (!toUs) continue;
    const rules = role(ref.kind, ref.name, b.metadata.namespace);
    if (b.kind === "ClusterRoleBinding") clusterWide.push(...rules);
    else {
      const ns = b.metadata.namespace ?? "";
      namespaced[ns] = [...(namespaced[ns] ?? []), ...rules];
    }
  }
  const toBind = Object.fromEntries(
    objects
      .filter((o) => o.kind === "ClusterRole" && !bound.has(o.metadata.name))
      .map((o) => [o.metadata.name, sorted(rulesOf(o))]),
  );
  const key = (o: Obj) => `${o.kind}/${o.metadata.name}`;
  const inBase = new Set(base.filter((o) => !RBAC.has(o.kind)).map(key));
  const others = objects.filter((o) => !RBAC.has(o.kind)).map(key);
  for (const k of inBase) assert.ok(others.includes(k), `deploy/'s ${k} is still rendered`);
  return {
    clusterWide: sorted(clusterWide),
    namespaced: Object.fromEntries(Object.entries(namespaced).map(([k, v]) => [k, sorted(v)])),
    toBind,
    added: sorted(others.filter((k) => !inBase.has(k))),
  };
}

/** The whole rendering, independent of the order kustomize emits the objects in. */
const fingerprint = (objects: Obj[]) =>
  objects
    .map((o) => JSON.stringify(o))
    .sort()
    .join("\n");

// --- which orders ------------------------------------------------------------------------------

function subsets<T>(items: T[]): T[][] {
  return items.reduce<T[][]>((all, item) => all.concat(all.map((s) => [...s, item])), [[]]);
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Whether a component does anything but add its own resources (patches, replacements, ...). */
function transforms(component: string): string[] {
  const k = parse(
    readFileSync(join(DEPLOY, "components", component, "kustomization.yaml"), "utf8"),
  ) as Record<string, unknown>;
  return Object.keys(k).filter((field) => !["apiVersion", "kind", "resources"].includes(field));
}

/** Maps `f` over `items`, `limit` at a time, in order. */
async function pool<T, R>(items: T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await f(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

describe("deploy/components combined in an overlay", () => {
  it("are the six this test knows what to expect of", () => {
    assert.deepEqual(COMPONENTS, [
      "cluster-resources",
      "impersonation",
      "monitoring",
      "narrow-secrets",
      "network-policy",
      "previews",
    ]);
  });

  it("render in every order, the same set the same objects, granting exactly what the chosen components say", async (t) => {
    const started = Date.now();
    const base = await render([]);
    // The components that touch RBAC: anything beyond adding objects, or an RBAC object among them.
    const alone = new Map(await Promise.all(COMPONENTS.map(async (c) => [c, await render([c])] as const)));
    const rbacOf = (objects: Obj[]) => fingerprint(objects.filter((o) => RBAC.has(o.kind)));
    const touching = COMPONENTS.filter(
      (c) => transforms(c).length > 0 || rbacOf(alone.get(c) ?? []) !== rbacOf(base),
    );
    for (const c of COMPONENTS.filter((c) => !touching.includes(c)))
      assert.deepEqual(transforms(c), [], `${c} only adds objects, so its place in the list cannot matter`);

    const every = process.env.SYNCWARD_EVERY_COMPONENT_ORDER === "1";
    const orders = new Map<string, string[]>();
    const add = (order: string[]) => orders.set(order.join(","), order);
    if (every) for (const s of subsets(COMPONENTS)) for (const p of permutations(s)) add(p);
    else {
      for (const s of subsets(touching)) for (const p of permutations(s)) add(p);
      for (const s of subsets(COMPONENTS)) {
        add(s);
        add([...s].reverse());
      }
    }

    const bySet = new Map<string, { order: string; fingerprint: string }>();
    await pool([...orders.values()], 2, async (order) => {
      const label = order.join(", ") || "deploy/ alone";
      let objects: Obj[];
      try {
        objects = await render(order);
      } catch (err) {
        assert.fail(`${label}: kubectl kustomize failed: ${(err as { stderr?: string }).stderr ?? err}`);
      }
      const chosen = new Set(order);
      const got = renderedGrants(objects, base);
      assert.deepEqual(got, expectedGrants(chosen), `${label}: grants what its components say`);
      // The promises an operator relies on, named (the comparison above already holds them).
      assert.equal(
        got.clusterWide.some((g) => g.endsWith(" core/secrets")),
        !chosen.has("narrow-secrets"),
        `${label}: Secrets cluster-wide exactly when narrow-secrets is not chosen`,
      );
      assert.equal(
        got.clusterWide.includes("delete core/namespaces"),
        chosen.has("previews"),
        `${label}: namespaces deleted only with previews`,
      );
      assert.equal(
        got.clusterWide.some((g) => /^(create|update|patch|delete) (apps|batch)\//.test(g)),
        !chosen.has("impersonation"),
        `${label}: writes on application kinds of its own only without impersonation`,
      );
      const set = [...order].sort().join(",");
      const seen = bySet.get(set);
      const print = fingerprint(objects);
      if (seen) assert.equal(print, seen.fingerprint, `${label} renders what ${seen.order} renders`);
      else bySet.set(set, { order: label, fingerprint: print });
    });
    assert.equal(bySet.size, 2 ** COMPONENTS.length, "every subset rendered");
    t.diagnostic(
      `${orders.size} orders of ${bySet.size} sets (every order of ${every ? "all" : touching.join(", ")}) rendered in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
