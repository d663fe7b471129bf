// The identity syncward runs as in integration tests: a ServiceAccount bound by exactly the RBAC
// in deploy/, so a grant missing there fails a test instead of hiding behind cluster-admin.
//
// deploy/ is rendered through an overlay that moves it to namespace `syncward-test` and suffixes
// its names with `-test`: the rules stay deploy/'s, but a cluster that also runs a real syncward
// (SYNCWARD_TEST_KUBECONFIG may point anywhere) keeps its own ServiceAccount and bindings.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import type { KubeObject } from "../../src/kube/object.ts";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
export const ACCOUNT_NAMESPACE = "syncward-test";
export const ACCOUNT_NAME = "syncward-test";
export const ACCOUNT_USER = `system:serviceaccount:${ACCOUNT_NAMESPACE}:${ACCOUNT_NAME}`;
/** What the harness applies from deploy/: the identity and its grants, not the workload. */
const RBAC_KINDS = new Set([
  "Namespace",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
]);
/** Tests run for minutes; the token only has to outlive one run. */
const TOKEN_DURATION = "6h";

let rendered: KubeObject[] | undefined;

/** deploy/'s Namespace, ServiceAccount and RBAC objects, as the overlay described above renders them. */
export function accountObjects(): KubeObject[] {
  rendered ??= renderRbac("test", []);
  return rendered;
}

/** deploy/ with `components`, moved to ACCOUNT_NAMESPACE and suffixed `-<suffix>`: its identity and grants. */
function renderRbac(suffix: string, components: string[]): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), "syncward-rbac-"));
  try {
    writeFileSync(
      join(dir, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        `namespace: ${ACCOUNT_NAMESPACE}`,
        `nameSuffix: -${suffix}`,
        `resources: [${relative(dir, DEPLOY)}]`,
        ...(components.length > 0
          ? [
              `components: [${components.map((c) => relative(dir, join(DEPLOY, "components", c))).join(", ")}]`,
            ]
          : []),
        "",
      ].join("\n"),
    );
    const out = execFileSync("kubectl", ["kustomize", dir], {
      stdio: ["ignore", "pipe", "pipe"],
    }).toString();
    return parseAllDocuments(out)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && RBAC_KINDS.has(o.kind));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * deploy/ plus `components` (e.g. ["impersonation"]) as a ServiceAccount of its own,
 * `syncward-<suffix>`, with a kubeconfig for a token of it: for tests of a deploy/ variant.
 * Returns the objects (to delete afterwards; the shared Namespace is left out) and the kubeconfig.
 */
export function provisionVariantAccount(
  adminKubeconfig: string,
  suffix: string,
  components: string[],
  target: string,
): { objects: KubeObject[]; kubeconfig: string; user: string } {
  const objects = renderRbac(suffix, components);
  applyAsAdmin(adminKubeconfig, objects);
  writeTokenKubeconfig(adminKubeconfig, `syncward-${suffix}`, target);
  waitForGrant(target, "list", "deployments.apps");
  return {
    objects: objects.filter((o) => o.kind !== "Namespace"),
    kubeconfig: target,
    user: `system:serviceaccount:${ACCOUNT_NAMESPACE}:syncward-${suffix}`,
  };
}

/** deploy/'s syncward-state Role and RoleBinding, moved to `namespace` (the subject stays the account). */
export function stateRbacFor(namespace: string): KubeObject[] {
  return accountObjects()
    .filter((o) => o.kind === "Role" || o.kind === "RoleBinding")
    .map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
}

function kubectlAs(kubeconfig: string, args: string[], input?: string): string {
  return execFileSync("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    input,
    stdio: ["pipe", "pipe", "pipe"],
  }).toString();
}

/** A kubeconfig with the admin one's server and CA, authenticating with `token`. */
function tokenKubeconfig(adminKubeconfig: string, token: string): string {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${adminKubeconfig} has no current cluster`);
  const ca = cluster.caData
    ? { "certificate-authority-data": cluster.caData }
    : cluster.caFile
      ? { "certificate-authority": cluster.caFile }
      : { "insecure-skip-tls-verify": cluster.skipTLSVerify };
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "test", cluster: { server: cluster.server, ...ca } }],
    users: [{ name: ACCOUNT_NAME, user: { token } }],
    contexts: [{ name: ACCOUNT_NAME, context: { cluster: "test", user: ACCOUNT_NAME } }],
    "current-context": ACCOUNT_NAME,
  });
}

/** Writes a kubeconfig for a fresh token of ServiceAccount `name` to `target` (atomically). */
function writeTokenKubeconfig(adminKubeconfig: string, name: string, target: string): string {
  const token = kubectlAs(adminKubeconfig, [
    "create",
    "token",
    name,
    "-n",
    ACCOUNT_NAMESPACE,
    `--duration=${TOKEN_DURATION}`,
  ]).trim();
  const partial = `${target}.${process.pid}.tmp`;
  writeFileSync(partial, tokenKubeconfig(adminKubeconfig, token), { mode: 0o600 });
  renameSync(partial, target);
  return target;
}

/** The authorizer reads bindings from a cache: wait until it allows `verb resource` everywhere. */
function waitForGrant(kubeconfig: string, verb: string, resource: string): void {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      kubectlAs(kubeconfig, ["auth", "can-i", verb, resource, "--all-namespaces"]);
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`the test ServiceAccount never got ${verb} ${resource}: ${String(err)}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

function applyAsAdmin(adminKubeconfig: string, objects: KubeObject[]): void {
  kubectlAs(
    adminKubeconfig,
    ["apply", "--server-side", "--force-conflicts", "--field-manager=syncward-tests", "-f", "-"],
    objects.map((o) => JSON.stringify(o)).join("\n"),
  );
}

/**
 * Applies the account's RBAC (idempotent: server-side apply of unchanged objects), requests a
 * token and writes a kubeconfig for it to `target`. Synchronous so that useCluster() can hand
 * out a client at module load.
 */
export function provisionAccount(adminKubeconfig: string, target: string): string {
  applyAsAdmin(adminKubeconfig, accountObjects());
  writeTokenKubeconfig(adminKubeconfig, ACCOUNT_NAME, target);
  waitForGrant(target, "patch", "deployments.apps");
  return target;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The ClusterRole rules of an opt-in file of deploy/components/<component>/ (default cluster-resources). */
export function optionalRules(file: string, component = "cluster-resources"): PolicyRule[] {
  const docs = parseAllDocuments(readFileSync(join(DEPLOY, "components", component, file), "utf8")).map(
    (d) => d.toJS() as KubeObject & { rules?: PolicyRule[] },
  );
  const role = docs.find((d) => d.kind === "ClusterRole");
  if (!role?.rules) throw new Error(`deploy/components/${component}/${file} has no ClusterRole`);
  return role.rules;
}

/**
 * A second ServiceAccount, `name`, with deploy/'s manager ClusterRole plus `extra` rules: for the
 * few tests of what a user grants beyond deploy/ (CreateNamespace, CRDs). A separate identity, so
 * that files running at the same time keep testing deploy/'s grants alone. Returns the objects
 * (to delete afterwards) and the kubeconfig.
 */
export function provisionExtendedAccount(
  adminKubeconfig: string,
  name: string,
  extra: PolicyRule[],
  target: string,
): { objects: KubeObject[]; kubeconfig: string } {
  const manager = accountObjects().find((o) => o.kind === "ClusterRole");
  if (!manager) throw new Error("deploy/ renders no ClusterRole");
  const subject = { kind: "ServiceAccount", name, namespace: ACCOUNT_NAMESPACE };
  const binding = (role: string, bindingName: string): KubeObject =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: bindingName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [subject],
    }) as KubeObject;
  const objects: KubeObject[] = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: ACCOUNT_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: extra,
    } as KubeObject,
    binding(manager.metadata.name, `${name}-manager`),
    binding(name, `${name}-extra`),
  ];
  applyAsAdmin(adminKubeconfig, objects);
  writeTokenKubeconfig(adminKubeconfig, name, target);
  const first = extra[0];
  waitForGrant(target, "patch", "deployments.apps");
  if (first?.verbs[0] && first.resources[0])
    waitForGrant(
      target,
      first.verbs[0],
      first.apiGroups[0] ? `${first.resources[0]}.${first.apiGroups[0]}` : first.resources[0],
    );
  return { objects, kubeconfig: target };
}

let provisioned: string | undefined;

/** The account's kubeconfig: the one tools/run-tests.ts wrote, or one made for this process. */
export function syncwardKubeconfig(adminKubeconfig: string): string {
  const given = process.env.SYNCWARD_TEST_SA_KUBECONFIG;
  if (given && existsSync(given)) return given;
  provisioned ??= provisionAccount(
    adminKubeconfig,
    join(mkdtempSync(join(tmpdir(), "syncward-sa-")), "kubeconfig"),
  );
  return provisioned;
}

/**
 * A ServiceAccount allowed everything in `namespace` and nothing cluster-wide (a RoleBinding to
 * cluster-admin there), with a kubeconfig for a token of it at `target`.
 */
export function provisionNamespacedAccount(
  adminKubeconfig: string,
  namespace: string,
  target: string,
): string {
  const name = "namespaced-robot";
  applyAsAdmin(adminKubeconfig, [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    } as KubeObject,
  ]);
  const token = kubectlAs(adminKubeconfig, ["create", "token", name, "-n", namespace]).trim();
  writeFileSync(target, tokenKubeconfig(adminKubeconfig, token), { mode: 0o600 });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      kubectlAs(target, ["auth", "can-i", "watch", "configmaps", "-n", namespace]);
      return target;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`the namespaced account never got its grant: ${String(err)}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}
