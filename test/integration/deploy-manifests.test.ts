// The manifests in deploy/ against a real API server: rendered with `kubectl kustomize`, every
// object is accepted by a server-side dry-run apply, the pod template passes the "restricted"
// Pod Security Standard its Namespace enforces, and the state Role grants nothing outside its
// namespace (checked both from its rules and by asking the API server's authorizer).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject } from "../../src/kube/object.ts";
import { eventually, useCluster } from "../support/cluster.ts";
import { optionalRules } from "../support/syncward-account.ts";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");

function render(dir: string): KubeObject[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { stdio: ["ignore", "pipe", "pipe"] }).toString();
  return parseAllDocuments(out)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

/** deploy/ as a base of an overlay that moves it to `namespace`, as a user would. */
function renderInto(namespace: string): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), "syncward-deploy-"));
  try {
    writeFileSync(
      join(dir, "kustomization.yaml"),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ${namespace}\nresources:\n  - ${relative(dir, DEPLOY)}\n`,
    );
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function one(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""} (found ${found.length})`);
  return found[0]!;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
  resourceNames?: string[];
}

interface Container {
  name: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}

interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: object }>;
}

interface DeploymentLike extends KubeObject {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const cluster = useCluster();
const { client } = cluster;
const base = render(DEPLOY);

describe("deploy/ manifests", () => {
  it("render the whole installation and no Secret values", () => {
    const kinds = base.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      "ClusterRole/syncward-manager",
      "ClusterRoleBinding/syncward-manager",
      "ConfigMap/syncward-projects-default",
      "Deployment/syncward",
      "Namespace/syncward",
      "PodDisruptionBudget/syncward",
      "Role/syncward-state",
      "RoleBinding/syncward-state",
      "Service/syncward",
      "ServiceAccount/syncward",
    ]);
    for (const o of base) {
      if (o.kind !== "Namespace" && !o.kind.startsWith("Cluster"))
        assert.equal(o.metadata.namespace, "syncward", `${o.kind}/${o.metadata.name} is in syncward`);
    }
  });

  it("run three replicas as non-root with a read-only root filesystem, probes and limits", () => {
    const d = one(base, "Deployment") as DeploymentLike;
    assert.equal(d.spec.replicas, 3);
    const pod = d.spec.template.spec;
    assert.equal(pod.serviceAccountName, "syncward");
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext?.runAsUser, 10001);
    assert.equal(pod.securityContext?.seccompProfile?.type, "RuntimeDefault");
    assert.equal(pod.containers.length, 1);
    const c = pod.containers[0]!;
    assert.equal(c.securityContext?.runAsNonRoot, true);
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ["ALL"]);
    assert.deepEqual(
      c.ports?.map((p) => [p.name, p.containerPort]),
      [["http", 3000]],
    );
    assert.deepEqual(c.livenessProbe?.httpGet, { path: "/healthz", port: "http" });
    assert.deepEqual(c.readinessProbe?.httpGet, { path: "/readyz", port: "http" });
    for (const k of ["cpu", "memory"]) assert.ok(c.resources?.requests?.[k], `requests.${k}`);
    assert.ok(c.resources?.limits?.memory, "limits.memory");

    // Writable places are emptyDirs: /tmp and the cache.
    const emptyDirs = new Set(pod.volumes?.filter((v) => v.emptyDir).map((v) => v.name));
    const mounts = Object.fromEntries((c.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
    assert.ok(emptyDirs.has(mounts["/tmp"] ?? ""), "/tmp is an emptyDir");
    assert.ok(emptyDirs.has(mounts["/var/cache/syncward"] ?? ""), "the cache is an emptyDir");
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    assert.ok(env.SYNCWARD_TREE_CACHE?.value?.startsWith("/var/cache/syncward/"));

    // Credentials come from the Secret by reference; no value is in the manifests.
    for (const key of ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET"]) {
      assert.deepEqual(env[key]?.valueFrom?.secretKeyRef, { name: "syncward-github", key }, key);
      assert.equal(env[key]?.value, undefined);
    }
    assert.equal(env.HOST?.value, "0.0.0.0", "Probot listens on every interface, not localhost");
    // A replica's Lease identity is its Pod, which also owns its membership Lease.
    const fieldOf = (name: string) =>
      (env[name] as { valueFrom?: { fieldRef?: { fieldPath?: string } } } | undefined)?.valueFrom?.fieldRef
        ?.fieldPath;
    assert.equal(fieldOf("POD_NAME"), "metadata.name");
    assert.equal(fieldOf("POD_UID"), "metadata.uid");
  });

  it("route the Service and the PodDisruptionBudget to the Deployment's pods", () => {
    const d = one(base, "Deployment") as DeploymentLike;
    const labels = d.spec.template.metadata.labels;
    const matches = (selector: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    assert.ok(matches(d.spec.selector.matchLabels));
    const svc = one(base, "Service") as KubeObject & {
      spec: { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string }> };
    };
    assert.ok(matches(svc.spec.selector));
    assert.deepEqual(
      svc.spec.ports.map((p) => [p.port, p.targetPort]),
      [[80, "http"]],
    );
    const pdb = one(base, "PodDisruptionBudget") as KubeObject & {
      spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
    };
    assert.equal(pdb.spec.maxUnavailable, 1, "drains take one replica of three at a time");
    assert.ok(matches(pdb.spec.selector.matchLabels));
  });

  it("grant the state Role only namespaced resources, without wildcards", async () => {
    const role = one(base, "Role") as KubeObject & { rules: Rule[] };
    const binding = one(base, "RoleBinding") as KubeObject & {
      roleRef: { kind: string; name: string };
      subjects: Array<{ kind: string; name: string; namespace: string }>;
    };
    assert.equal(binding.metadata.namespace, role.metadata.namespace);
    assert.deepEqual(binding.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: role.metadata.name,
    });
    assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "syncward", namespace: "syncward" }]);

    const granted: string[] = [];
    for (const rule of role.rules) {
      assert.equal(rule.nonResourceURLs, undefined);
      for (const list of [rule.apiGroups ?? [], rule.resources ?? [], rule.verbs])
        assert.ok(!list.includes("*"), `no wildcard in ${JSON.stringify(rule)}`);
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          // Ask discovery whether the resource is namespaced: a Role's grants on a cluster-scoped
          // resource would be meaningless, and a sign of a mistake.
          const path = group === "" ? "/api/v1" : `/apis/${group}/v1`;
          const list = await client.request<{ resources: Array<{ name: string; namespaced: boolean }> }>(
            "GET",
            path,
          );
          const r = list.resources.find((x) => x.name === resource);
          assert.ok(r, `${resource}.${group} is served`);
          assert.equal(r.namespaced, true, `${resource}.${group} is namespaced`);
          for (const verb of rule.verbs) granted.push(`${verb} ${resource}${group ? `.${group}` : ""}`);
        }
      }
    }
    assert.deepEqual(granted.sort(), [
      "create configmaps",
      "create leases.coordination.k8s.io",
      "get configmaps",
      "get leases.coordination.k8s.io",
      "get secrets",
      "list configmaps",
      "list leases.coordination.k8s.io",
      "list secrets",
      "patch configmaps",
      "update configmaps",
      "update leases.coordination.k8s.io",
      "watch configmaps",
      "watch leases.coordination.k8s.io",
      "watch secrets",
    ]);
  });

  it("grant the manager ClusterRole no wildcards and no escalation verbs", () => {
    const role = one(base, "ClusterRole", "syncward-manager") as KubeObject & { rules: Rule[] };
    for (const rule of role.rules) {
      for (const list of [rule.apiGroups ?? [], rule.resources ?? [], rule.verbs])
        assert.ok(!list.includes("*"), `no wildcard in ${JSON.stringify(rule)}`);
      for (const verb of ["escalate", "bind", "impersonate"]) assert.ok(!rule.verbs.includes(verb), verb);
      for (const resource of rule.resources ?? [])
        assert.ok(!["clusterroles", "nodes", "customresourcedefinitions"].includes(resource), resource);
      if ((rule.resources ?? []).includes("clusterrolebindings")) assert.deepEqual(rule.verbs, ["list"]);
    }
    const crb = one(base, "ClusterRoleBinding") as KubeObject & {
      subjects: Array<{ kind: string; name: string; namespace: string }>;
    };
    assert.deepEqual(crb.subjects, [{ kind: "ServiceAccount", name: "syncward", namespace: "syncward" }]);
  });

  it("keep the opt-in grants (components/cluster-resources) to creating namespaces and CRDs, without wildcards", () => {
    const granted = optionalRules("cluster-resources.yaml").flatMap((rule) =>
      rule.resources.flatMap((resource) =>
        rule.verbs.map((verb) => `${verb} ${resource}${rule.apiGroups[0] ? `.${rule.apiGroups[0]}` : ""}`),
      ),
    );
    assert.deepEqual(granted.sort(), [
      "create customresourcedefinitions.apiextensions.k8s.io",
      "create namespaces",
      "delete customresourcedefinitions.apiextensions.k8s.io",
      "get customresourcedefinitions.apiextensions.k8s.io",
      "list customresourcedefinitions.apiextensions.k8s.io",
      "patch customresourcedefinitions.apiextensions.k8s.io",
      "update customresourcedefinitions.apiextensions.k8s.io",
      "watch customresourcedefinitions.apiextensions.k8s.io",
    ]);
  });

  describe("on the API server", () => {
    let ns = "";
    let objects: KubeObject[] = [];
    before(async () => {
      // A fresh namespace stands in for "syncward" (which a developer's own syncward may use);
      // the overlay moves every namespaced object and binding subject into it.
      ns = await cluster.namespace("sw-deploy");
      objects = renderInto(ns);
      // The Namespace for real (namespaced dry-runs need it to exist), with its Pod Security labels.
      await client.apply(one(objects, "Namespace"));
    });
    after(() => {
      objects = [];
    });

    it("accept every object in a server-side dry-run apply", async () => {
      assert.equal(objects.length, base.length);
      for (const obj of objects) {
        const what = `${obj.kind}/${obj.metadata.name}`;
        try {
          const result = await client.apply(obj, { dryRun: true });
          assert.equal(result.kind, obj.kind, what);
          assert.equal(result.metadata.name, obj.metadata.name, what);
        } catch (err) {
          assert.fail(`${what} was refused: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      // Dry-runs leave nothing behind.
      assert.equal(await client.get("apps/v1", "Deployment", ns, "syncward"), undefined);
    });

    it("run pods that the restricted Pod Security Standard admits", async () => {
      const d = one(objects, "Deployment") as DeploymentLike;
      const pod = (name: string, spec: PodSpec): KubeObject => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: ns, labels: d.spec.template.metadata.labels },
        spec,
      });
      await client.apply(pod("syncward-template", d.spec.template.spec), { dryRun: true });
      // The control: the same pod without its security settings is refused, so the check above
      // really ran against an enforcing namespace.
      const loose: PodSpec = {
        ...d.spec.template.spec,
        securityContext: {},
        containers: d.spec.template.spec.containers.map((c) => ({ ...c, securityContext: {} })),
      };
      await assert.rejects(
        client.apply(pod("syncward-loose", loose), { dryRun: true }),
        (err: unknown) => err instanceof KubeApiError && err.status === 403 && /restricted/.test(err.message),
      );
    });

    it("let the ServiceAccount touch its state in its namespace and nowhere else", async () => {
      // The namespaced objects for real (removed with the namespace); the ClusterRoleBinding is not
      // created, so only the state Role applies.
      for (const kind of ["ServiceAccount", "Role", "RoleBinding"]) await client.apply(one(objects, kind));
      const user = `system:serviceaccount:${ns}:syncward`;
      const can = async (verb: string, resource: string, namespace?: string, group = "") => {
        const review = await client.request<{ status: { allowed: boolean } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          {
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              spec: {
                user,
                groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
                resourceAttributes: { verb, resource, group, ...(namespace ? { namespace } : {}) },
              },
            },
          },
        );
        return review.status.allowed;
      };
      // The authorizer reads RBAC objects from a cache: wait until it has seen the new binding.
      await eventually("the RoleBinding to take effect", () => can("update", "configmaps", ns), 10_000);
      assert.equal(await can("watch", "configmaps", ns), true);
      assert.equal(await can("update", "leases", ns, "coordination.k8s.io"), true);
      assert.equal(await can("delete", "configmaps", ns), false);
      // The cluster registry's Secrets are read and watched in syncward's namespace, never written,
      // and no other namespace's Secrets are readable through the state Role.
      for (const verb of ["get", "list", "watch"]) assert.equal(await can(verb, "secrets", ns), true, verb);
      for (const verb of ["create", "update", "patch", "delete"])
        assert.equal(await can(verb, "secrets", ns), false, `${verb} secrets`);
      assert.equal(await can("get", "secrets", "default"), false);
      assert.equal(await can("list", "secrets"), false, "secrets not across namespaces");
      assert.equal(await can("get", "configmaps", "default"), false);
      assert.equal(await can("list", "configmaps"), false, "not across namespaces");
      assert.equal(await can("create", "leases", "kube-system", "coordination.k8s.io"), false);
      assert.equal(await can("create", "namespaces"), false);
    });
  });
});
