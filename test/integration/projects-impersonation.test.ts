// Projects with impersonation on the real control plane, syncward running as deploy/ with
// components/impersonation (no write on application kinds, only `impersonate` on the listed
// accounts, reads, and its state Role): every write goes as the project's ServiceAccount, so the
// API server itself refuses what that account may not do, in its own words plus what to grant.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import { type KubeObject, keyOf } from "../../src/kube/object.ts";
import { useCluster } from "../support/cluster.ts";
import {
  configMap,
  noRetry,
  projectsFile,
  run,
  service,
  teamA,
  teamRepo,
  where,
} from "../support/projects.ts";
import { provisionVariantAccount } from "../support/syncward-account.ts";

const cluster = useCluster();

describe("projects with impersonation (deploy/ with components/impersonation)", () => {
  const suffix = `imp-${randomBytes(3).toString("hex")}`;
  const account = provisionVariantAccount(
    cluster.kubeconfig,
    suffix,
    ["impersonation"],
    join(mkdtempSync(join(tmpdir(), "syncward-imp-")), "kubeconfig"),
  );
  const own = KubeClient.fromKubeconfig({ kubeconfig: account.kubeconfig });
  const made: KubeObject[] = [];
  after(async () => {
    own.close();
    for (const o of [...account.objects, ...made])
      await cluster.client.delete({ ...keyOf(o), apiVersion: o.apiVersion }, "background");
  });
  const subject = { kind: "ServiceAccount", name: `syncward-${suffix}`, namespace: "syncward-test" };
  const rbac = (kind: string, namespace: string, name: string, fields: Record<string, unknown>) =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      metadata: { name, namespace },
      ...fields,
    }) as KubeObject;
  const apply = async (objects: KubeObject[]) => {
    for (const o of objects) await cluster.client.apply(o);
  };
  const canI = (as: string, verb: string, resource: string, namespace: string) => {
    try {
      execFileSync(
        "kubectl",
        ["--kubeconfig", cluster.kubeconfig, "auth", "can-i", verb, resource, "-n", namespace, "--as", as],
        {
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      return true;
    } catch {
      return false;
    }
  };
  const waitFor = async (what: string, check: () => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`never: ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  /** A namespace for syncward's state, with deploy/'s state Role (of the variant) bound to the account. */
  const stateNamespace = async () => {
    const state = await cluster.namespace("proj-state");
    const role = account.objects.find((o) => o.kind === "Role") as KubeObject;
    await apply([
      { ...role, metadata: { ...role.metadata, namespace: state } },
      rbac("RoleBinding", state, "syncward-state", {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
        subjects: [subject],
      }),
    ]);
    await waitFor("the state Role", () => canI(account.user, "create", "configmaps", state));
    return state;
  };

  it("deploy/components/impersonation leaves syncward reads only, and impersonation of the named account", () => {
    const rules = (name: string) =>
      (
        account.objects.find((o) => o.kind === "ClusterRole" && o.metadata.name === `${name}-${suffix}`) as
          | (KubeObject & {
              rules: Array<{ verbs: string[]; resources: string[]; resourceNames?: string[] }>;
            })
          | undefined
      )?.rules ?? [];
    const verbs = new Set(rules("syncward-manager").flatMap((r) => r.verbs));
    assert.deepEqual([...verbs].sort(), ["get", "list", "watch"]);
    assert.deepEqual(rules("syncward-impersonate"), [
      {
        apiGroups: [""],
        resources: ["serviceaccounts"],
        resourceNames: ["deployer"],
        verbs: ["impersonate"],
      },
    ]);
  });

  it("writes as the project's ServiceAccount: a kind it may not create fails with the API server's forbidden, though syncward's policy allows it", async () => {
    const ns = await cluster.namespace("team-a");
    const state = await stateNamespace();
    const deployer = `system:serviceaccount:${ns}:deployer`;
    // syncward itself: reads, its state Role, and impersonation of `deployer` in this namespace only.
    await apply([
      rbac("RoleBinding", ns, "syncward-impersonate", {
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: `syncward-impersonate-${suffix}`,
        },
        subjects: [subject],
      }),
      // The project's account may manage ConfigMaps and nothing else.
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "deployer", namespace: ns } },
      rbac("Role", ns, "deployer", {
        rules: [
          {
            apiGroups: [""],
            resources: ["configmaps"],
            verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
          },
        ],
      }),
      rbac("RoleBinding", ns, "deployer", {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "deployer" },
        subjects: [{ kind: "ServiceAccount", name: "deployer", namespace: ns }],
      }),
    ]);
    await waitFor(
      "the grants to take effect",
      () =>
        canI(deployer, "patch", "configmaps", ns) &&
        canI(account.user, "impersonate", "serviceaccounts/deployer", ns),
    );

    // syncward's own identity writes no application kind, anywhere.
    assert.equal(canI(account.user, "create", "configmaps", ns), false);
    assert.equal(canI(account.user, "patch", "deployments.apps", ns), false);
    await assert.rejects(
      own.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "direct", namespace: ns },
        data: {},
      }),
      (err: unknown) => err instanceof KubeApiError && err.status === 403,
    );

    const projects = projectsFile([
      teamA({ destinations: [{ namespace: "team-a-*", serviceAccount: "deployer" }] }),
    ]);
    const repo = teamRepo(
      "team-a-web",
      ns,
      { "settings.yaml": configMap("settings"), "service.yaml": service },
      noRetry,
    );
    const common = where(repo.dir, account.kubeconfig, state, projects);
    const sync = await run(["app", "sync", "dev", ...common]);
    assert.notEqual(sync.code, 0, sync.out);
    // "cannot patch", not "cannot get": the live Service was read as syncward itself (the account
    // may not read Services), only the write went as the account.
    const text = sync.out + sync.err;
    assert.match(
      text,
      new RegExp(
        `services "web" is forbidden: User "${deployer}" cannot patch resource "services" in API group "" in the namespace "${ns}"`,
      ),
      text,
    );
    assert.match(
      text,
      new RegExp(
        `grant ServiceAccount ${ns}/deployer "patch" on services in namespace ${ns} with a Role and RoleBinding`,
      ),
    );
    assert.equal(await cluster.client.get("v1", "Service", ns, "web"), undefined, "nothing applied");
    assert.equal(
      await cluster.client.get("v1", "ConfigMap", ns, "settings"),
      undefined,
      "not even the allowed kind",
    );

    // What the account may create syncs, written as the account (syncward could not have written it).
    repo.commit({ "app/service.yaml": null });
    const allowed = await run(["app", "sync", "dev", ...common]);
    assert.equal(allowed.code, 0, allowed.out + allowed.err);
    assert.ok(await cluster.client.get("v1", "ConfigMap", ns, "settings"));
  });

  it("an account syncward may not impersonate fails with the API server's words and the grant it needs", async () => {
    const ns = await cluster.namespace("team-a");
    const state = await stateNamespace();
    const projects = projectsFile([
      teamA({ destinations: [{ namespace: "team-a-*", serviceAccount: "ops:root" }] }),
    ]);
    const repo = teamRepo("team-a-ops", ns, { "settings.yaml": configMap("settings") }, noRetry);
    const sync = await run(["app", "sync", "dev", ...where(repo.dir, account.kubeconfig, state, projects)]);
    assert.notEqual(sync.code, 0);
    assert.match(sync.out + sync.err, /cannot impersonate resource "serviceaccounts"/);
    assert.match(
      sync.out + sync.err,
      /may not impersonate system:serviceaccount:ops:root: grant it "impersonate" on serviceaccounts "root" in namespace ops/,
    );
    assert.equal(await cluster.client.get("v1", "ConfigMap", ns, "settings"), undefined);
  });
});
