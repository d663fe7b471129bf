// The second control plane tools/run-tests.ts starts beside the first for files that deploy to two
// clusters (it starts only when a file in the run names SYNCWARD_TEST_KUBECONFIG_2). Fixtures and
// assertions use its admin client; syncward reaches it as deploy/'s ServiceAccount there, through
// a cluster Secret in the registry (secretFor) or a kubeconfig context (contextKubeconfig).
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { after } from "node:test";
import { parse, stringify } from "yaml";
import { KubeClient } from "../../src/kube/client.ts";
import { clusterSecretFor } from "../../src/kube/cluster-secret.ts";
import { Kubeconfig } from "../../src/kube/kubeconfig.ts";

export interface SecondCluster {
  client: KubeClient;
  kubeconfig: string;
  /** deploy/'s ServiceAccount on the second plane. */
  syncwardKubeconfig: string;
  namespace(name?: string): Promise<string>;
  /** The registry Secret naming the second plane `name` (syncward's account's token and CA). */
  secretFor(name: string, namespace: string): ReturnType<typeof clusterSecretFor>;
}

function need(name: string): string {
  const v = process.env[name];
  if (!v)
    throw new Error(
      `${name} is not set: two-cluster tests run through tools/run-tests.ts, which starts the second plane`,
    );
  return v;
}

export function useSecondCluster(): SecondCluster {
  const kubeconfig = need("SYNCWARD_TEST_KUBECONFIG_2");
  const syncwardKubeconfig = need("SYNCWARD_TEST_SA_KUBECONFIG_2");
  const client = KubeClient.fromKubeconfig({ kubeconfig });
  const created: string[] = [];
  after(async () => {
    for (const name of created)
      await client
        .delete({ apiVersion: "v1", group: "", kind: "Namespace", namespace: "", name }, "background")
        .catch(() => undefined);
    client.close();
  });
  return {
    client,
    kubeconfig,
    syncwardKubeconfig,
    async namespace(name = `t2-${randomBytes(3).toString("hex")}`) {
      await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      created.push(name);
      return name;
    },
    secretFor(name, namespace) {
      const kc = Kubeconfig.load({ file: syncwardKubeconfig });
      const ca = kc.cluster.caFile ? readFileSync(kc.cluster.caFile, "utf8") : undefined;
      return clusterSecretFor(name, namespace, { cluster: kc.cluster, user: kc.user }, { ca });
    },
  };
}

/** One kubeconfig with both planes as contexts `first` (current) and `second`, for the CLI. */
export function twoContextKubeconfig(first: string, second: string, path: string): string {
  const a = parse(readFileSync(first, "utf8"));
  const b = parse(readFileSync(second, "utf8"));
  const one = (doc: typeof a, name: string) => ({
    cluster: { name, cluster: doc.clusters[0].cluster },
    user: { name, user: doc.users[0].user },
    context: { name, context: { cluster: name, user: name } },
  });
  const [x, y] = [one(a, "first"), one(b, "second")];
  writeFileSync(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [x.cluster, y.cluster],
      users: [x.user, y.user],
      contexts: [x.context, y.context],
      "current-context": "first",
    }),
  );
  return path;
}
