// Integration tests run against the control plane that tools/run-tests.ts started (or the
// cluster named by SYNCWARD_TEST_KUBECONFIG). Each test file gets namespaces of its own and
// removes them when it is done, so files can run side by side on one plane.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";

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
  client: KubeClient;
  kubeconfig: string;
  /** A fresh namespace (created), removed after the file's tests. */
  namespace(prefix?: string): Promise<string>;
}

export function useCluster(): TestCluster {
  const kubeconfig = testKubeconfig();
  const client = KubeClient.fromKubeconfig({ kubeconfig });
  const created: string[] = [];
  after(async () => {
    await Promise.all(
      created.map((name) =>
        client.delete({ group: "", kind: "Namespace", namespace: "", name, apiVersion: "v1" }, "background"),
      ),
    );
    client.close();
  });
  return {
    client,
    kubeconfig,
    async namespace(prefix = "t") {
      const name = `${prefix}-${randomBytes(3).toString("hex")}`;
      await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      created.push(name);
      return name;
    },
  };
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
