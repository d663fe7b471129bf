// Integration tests run against the control plane that tools/run-tests.ts started (or the
// cluster named by SYNCWARD_TEST_KUBECONFIG). Each test file gets namespaces of its own and
// removes them when it is done, so files can run side by side on one plane.
//
// Two identities: `client`/`kubeconfig` are cluster-admin, for fixtures (namespaces, drift made
// by hand, reading live state); `syncwardClient`/`syncwardKubeconfig` are the ServiceAccount bound
// by deploy/'s RBAC, for the code under test (engine, reconciler, CLI, app, controller).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import { type KubeObject, keyOf } from "../../src/kube/object.ts";
import {
  type PolicyRule,
  provisionExtendedAccount,
  stateRbacFor,
  syncwardKubeconfig,
} from "./syncward-account.ts";

export function testKubeconfig(): string {
  const path = process.env.SYNCWARD_TEST_KUBECONFIG;
  if (!path) {
    // Never skip: an integration test without a cluster is a failure with the reason.
    throw new Error(
      "integration tests need a cluster: run them with `npm test` (which starts the local control plane) " +
        "or set SYNCWARD_TEST_KUBECONFIG=/path/to/kubeconfig",
    );
  }
  return path;
}

export function kubectl(args: string[], input?: string): string {
  return execFileSync("kubectl", ["--kubeconfig", testKubeconfig(), ...args], {
    input,
    stdio: ["pipe", "pipe", "pipe"],
  }).toString();
}

export interface TestCluster {
  /** cluster-admin: for fixtures and assertions, never for the code under test. */
  client: KubeClient;
  kubeconfig: string;
  /** syncward's ServiceAccount with deploy/'s RBAC: what the code under test runs as. */
  readonly syncwardClient: KubeClient;
  readonly syncwardKubeconfig: string;
  /** A fresh namespace (created), removed after the file's tests. */
  namespace(prefix?: string): Promise<string>;
  /** A fresh namespace where the ServiceAccount has deploy/'s syncward-state Role, for StateStore and leases. */
  stateNamespace(prefix?: string): Promise<string>;
  /**
   * A separate ServiceAccount with deploy/'s grants plus `extra` (e.g. optionalRules(...)), removed
   * after the file: for tests of what a user binds beyond deploy/.
   */
  syncwardClientWith(extra: PolicyRule[]): { client: KubeClient; kubeconfig: string };
}

export function useCluster(): TestCluster {
  const kubeconfig = testKubeconfig();
  const client = KubeClient.fromKubeconfig({ kubeconfig });
  const created: string[] = [];
  const extraObjects: KubeObject[] = [];
  const extraClients: KubeClient[] = [];
  // Set up on first use: files that never run syncward as the account pay nothing for it.
  let account: { kubeconfig: string; client: KubeClient } | undefined;
  const useAccount = () => {
    if (!account) {
      const path = syncwardKubeconfig(kubeconfig);
      account = { kubeconfig: path, client: KubeClient.fromKubeconfig({ kubeconfig: path }) };
    }
    return account;
  };
  after(async () => {
    await Promise.all(
      created.map((name) =>
        client.delete({ group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" }, "background"),
      ),
    );
    for (const o of extraObjects) {
      const k = keyOf(o);
      await client.delete({ ...k, apiVersion: o.apiVersion }, "background");
    }
    for (const c of extraClients) c.close();
    client.close();
    account?.client.close();
  });
  const namespace = async (prefix = "t") => {
    const name = `${prefix}-${randomBytes(3).toString("hex")}`;
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    created.push(name);
    return name;
  };
  return {
    client,
    kubeconfig,
    get syncwardClient() {
      return useAccount().client;
    },
    get syncwardKubeconfig() {
      return useAccount().kubeconfig;
    },
    namespace,
    syncwardClientWith(extra) {
      const name = `syncward-x-${randomBytes(3).toString("hex")}`;
      const dir = mkdtempSync(join(tmpdir(), "syncward-sa-"));
      const made = provisionExtendedAccount(kubeconfig, name, extra, join(dir, "kubeconfig"));
      extraObjects.push(...made.objects);
      const c = KubeClient.fromKubeconfig({ kubeconfig: made.kubeconfig });
      extraClients.push(c);
      return { client: c, kubeconfig: made.kubeconfig };
    },
    async stateNamespace(prefix = "state") {
      const name = await namespace(prefix);
      await grantStateRole(client, useAccount().client, name);
      return name;
    },
  };
}

/**
 * Gives deploy/'s account the syncward-state Role and RoleBinding in `namespace` (as `admin`), and
 * waits until the API server's authorizer sees them, so the code under test never races them.
 */
export async function grantStateRole(
  admin: KubeClient,
  account: KubeClient,
  namespace: string,
): Promise<void> {
  for (const obj of stateRbacFor(namespace)) await admin.apply(obj);
  await eventually(`the state Role in ${namespace} to take effect`, async () => {
    const review = await account.request<{ status: { allowed: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: {
            resourceAttributes: {
              namespace,
              verb: "update",
              resource: "leases",
              group: "coordination.k8s.io",
            },
          },
        },
      },
    );
    return review.status.allowed;
  });
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `timed out after ${timeoutMs}ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`,
  );
}
